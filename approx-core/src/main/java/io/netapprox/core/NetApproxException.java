package io.netapprox.core;

/**
 * The root of NetApprox's own failures, so an integration can catch one type: the engine's ({@code
 * AtpException}, {@code AtpJobFailedException}), the control plane's ({@code ControlException},
 * {@code ControlClosedException}, {@code ControlTimeoutException}) and the transport's ({@code
 * TransportException}). Unchecked, like Netty's {@code ChannelException}. Caller mistakes are the
 * usual JDK exceptions instead ({@link IllegalArgumentException}, {@link IllegalStateException}).
 */
public class NetApproxException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NetApproxException(String message) {
        super(message);
    }

    public NetApproxException(String message, Throwable cause) {
        super(message, cause);
    }
}

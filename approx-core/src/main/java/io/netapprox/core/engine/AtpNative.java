package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;

/**
 * Availability of the native ATP engine, in the style of Netty's {@code Epoll.isAvailable()}. The
 * library is loaded the first time this class (or any engine class) is used.
 */
public final class AtpNative {
    private static final Throwable UNAVAILABILITY_CAUSE;

    static {
        Throwable cause = null;
        try {
            NativeLibrary.load();
        } catch (Throwable t) {
            cause = t;
        }
        UNAVAILABILITY_CAUSE = cause;
    }

    private AtpNative() {}

    /** True when libnetapprox is loaded and its natives are bound. */
    public static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /**
     * Throws an {@link UnsatisfiedLinkError} (naming the platform) when the engine is not
     * available.
     */
    public static void ensureAvailability() {
        if (UNAVAILABILITY_CAUSE != null) {
            UnsatisfiedLinkError e =
                    new UnsatisfiedLinkError(
                            "the netapprox native engine is unavailable: "
                                    + UNAVAILABILITY_CAUSE.getMessage());
            e.initCause(UNAVAILABILITY_CAUSE);
            throw e;
        }
    }

    /** Why the engine is unavailable, or null. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** The native library's version ("MAJOR.MINOR.PATCH"). */
    public static String version() {
        ensureAvailability();
        return NativeEngine.version();
    }

    /** The name of a native status code (e.g. "NA_ERR_PEER_DEAD"). */
    static String strerror(int code) {
        return AtpStatus.of(code).nativeName();
    }
}

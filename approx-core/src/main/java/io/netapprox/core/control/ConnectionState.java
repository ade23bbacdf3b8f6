package io.netapprox.core.control;

/** Where a {@link ControlConnection} is: its handshake phases, the session, its end. */
enum ConnectionState {
    /** Server: waiting for HELLO. Client: HELLO sent, waiting for HELLO_ACK. */
    HELLO,
    /** Server: waiting for AUTH_RESPONSE. Client: AUTH_RESPONSE sent, waiting for AUTH_OK. */
    AUTH,
    /**
     * Server: waiting for SESSION_SETUP. Client: SESSION_SETUP sent, waiting for SESSION_SETUP_ACK.
     */
    SESSION,
    ESTABLISHED,
    /** Server: a data connection's DATA_ATTACH_ACK sent, waiting for DATA_ATTACH_PROOF. */
    ATTACH,
    /**
     * Server: a data connection, handed over to the data plane (the connection's handler is gone).
     */
    HANDED_OVER,
    CLOSING
}

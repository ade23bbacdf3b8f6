package io.netapprox.core.job;

/**
 * The engine's status codes ({@code NA_OK} and {@code NA_ERR_*} of netapprox.h), with stable
 * values.
 */
public enum AtpStatus {
    OK(0, "NA_OK"),
    INVALID_ARGUMENT(-1, "NA_ERR_INVALID_ARGUMENT"),
    NOT_FOUND(-2, "NA_ERR_NOT_FOUND"),
    ALREADY_EXISTS(-3, "NA_ERR_ALREADY_EXISTS"),
    WOULD_BLOCK(-4, "NA_ERR_WOULD_BLOCK"),
    LIMIT_EXCEEDED(-5, "NA_ERR_LIMIT_EXCEEDED"),
    CLOSED(-6, "NA_ERR_CLOSED"),
    PEER_DEAD(-7, "NA_ERR_PEER_DEAD"),
    IDLE_TIMEOUT(-8, "NA_ERR_IDLE_TIMEOUT"),
    PROTOCOL(-9, "NA_ERR_PROTOCOL"),
    INTERNAL(-10, "NA_ERR_INTERNAL"),
    CLOSED_HANDLE(-100, "NA_ERR_CLOSED_HANDLE"),
    SYSTEM(-101, "NA_ERR_SYSTEM"),
    ADDRESS(-102, "NA_ERR_ADDRESS"),
    BUFFER_TOO_SMALL(-103, "NA_ERR_BUFFER_TOO_SMALL"),
    UNKNOWN(Integer.MIN_VALUE, "NA_ERR_UNKNOWN");

    private final int code;
    private final String nativeName;

    AtpStatus(int code, String nativeName) {
        this.code = code;
        this.nativeName = nativeName;
    }

    /** The C API's value. */
    public int code() {
        return code;
    }

    /** The C API's name, e.g. {@code NA_ERR_PEER_DEAD}. */
    public String nativeName() {
        return nativeName;
    }

    /** Maps a C API value (unknown values map to {@link #UNKNOWN}). */
    public static AtpStatus of(int code) {
        switch (code) {
            case 0:
                return OK;
            case -1:
                return INVALID_ARGUMENT;
            case -2:
                return NOT_FOUND;
            case -3:
                return ALREADY_EXISTS;
            case -4:
                return WOULD_BLOCK;
            case -5:
                return LIMIT_EXCEEDED;
            case -6:
                return CLOSED;
            case -7:
                return PEER_DEAD;
            case -8:
                return IDLE_TIMEOUT;
            case -9:
                return PROTOCOL;
            case -10:
                return INTERNAL;
            case -100:
                return CLOSED_HANDLE;
            case -101:
                return SYSTEM;
            case -102:
                return ADDRESS;
            case -103:
                return BUFFER_TOO_SMALL;
            default:
                return UNKNOWN;
        }
    }
}

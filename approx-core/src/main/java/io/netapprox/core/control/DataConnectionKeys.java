package io.netapprox.core.control;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A server's data-connection keys ({@link KeySchedule#dataConnectionKey}) of the sessions that may
 * still attach a TCP data connection: added at SESSION_SETUP when TCP is among the agreed planes,
 * taken by the one connection that proves it (DATA_ATTACH_PROOF), wiped when the session ends. An
 * attach that only names the session (DATA_ATTACH, whose session id an observer of the control
 * connection has seen) takes nothing, so it cannot lock the genuine connection out.
 */
final class DataConnectionKeys {
    private final ConcurrentHashMap<Long, byte[]> keys = new ConcurrentHashMap<>();

    void put(long sessionId, byte[] key) {
        byte[] old = keys.put(sessionId, key);
        if (old != null) {
            Arrays.fill(old, (byte) 0);
        }
    }

    /** A copy of the key of a session that still expects its data connection, or null. */
    byte[] copyOf(long sessionId) {
        byte[] k = keys.get(sessionId);
        return k != null ? k.clone() : null;
    }

    /** Takes the session's key for the one connection that attaches; false when it is gone. */
    boolean take(long sessionId) {
        byte[] k = keys.remove(sessionId);
        if (k == null) {
            return false;
        }
        Arrays.fill(k, (byte) 0);
        return true;
    }

    /** The session ended (or its setup failed): no data connection may attach any more. */
    void forget(long sessionId) {
        take(sessionId);
    }

    int size() {
        return keys.size();
    }
}

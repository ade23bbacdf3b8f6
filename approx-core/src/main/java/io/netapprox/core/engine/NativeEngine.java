package io.netapprox.core.engine;

import java.nio.ByteBuffer;

/**
 * The JNI surface of libnetapprox. Every method is bound by {@code JNI_OnLoad} with {@code
 * RegisterNatives} (native/src/jni/netapprox_jni.cpp), so there are no {@code Java_*} symbols and
 * relocating this package when shading works (the loader encodes the runtime package into the
 * extracted library's file name).
 *
 * <p>All methods return {@code NA_OK} (0) or a negative {@code NA_ERR_*} code; none throws (except
 * the JVM's own OutOfMemoryError). Handles are plain {@code long}s validated by the C API: a stale
 * handle yields {@code NA_ERR_CLOSED_HANDLE}, never a crash.
 */
final class NativeEngine {
    static {
        // Loads the library (through AtpNative, which records why it is unavailable) on first use
        // of any native.
        AtpNative.ensureAvailability();
    }

    private NativeEngine() {}

    // ---- records shared with the C side (slot names verified when the library loads, see
    // NativeRecord) ---------
    static final int RECORD_CONFIG = 0;
    static final int RECORD_REPORT = 1;
    static final int RECORD_GROUP = 2;
    static final int RECORD_STATS = 3;
    static final int RECORD_EVENT = 4;
    static final int RECORD_SUBMIT = 5;

    static final int EVENT_RECORD_BYTES = 104;
    static final int EV_TYPE = 0;
    static final int EV_STATUS = 4;
    static final int EV_SESSION = 8;
    static final int EV_JOB = 16;
    static final int EV_MESSAGE = 20;
    static final int EV_GROUP = 24;
    static final int EV_DATA = 32;
    static final int EV_LEN = 40;
    static final int EV_HANDLE = 48;
    static final int EV_REPORT = 56;
    static final int EV_EPOCH_AT = 64;
    static final int EV_EPOCH_TLR = 72;
    static final int EV_EPOCH_LOSS = 80;
    static final int EV_EPOCH_RATE = 88;
    static final int EV_EPOCH_CLASS = 96;
    static final int EV_RESERVED = 100;

    static final int SUBMIT_RECORD_BYTES = 24;
    static final int SUB_GROUP = 0;
    static final int SUB_INDEX = 4;
    static final int SUB_ADDRESS = 8;
    static final int SUB_LENGTH = 16;
    static final int SUB_STATUS = 20;

    // event types (enum na_event_type)
    static final int EVENT_MESSAGE = 0;
    static final int EVENT_MESSAGE_LOST = 1;
    static final int EVENT_JOB_STARTED = 2;
    static final int EVENT_JOB_DONE = 3;
    static final int EVENT_SESSION_ERROR = 4;
    static final int EVENT_EPOCH = 5;

    /** Record sizes and the pointer size, as {@link #layoutInfo()} reports them. */
    static int[] expectedLayout() {
        return new int[] {EVENT_RECORD_BYTES, SUBMIT_RECORD_BYTES, 8};
    }

    static native int[] layoutInfo();

    /**
     * The slot names of a record, in slot order ("name@offset" for byte layouts); null for an
     * unknown record.
     */
    static native String[] recordFields(int record);

    static native String version();

    static native String strerror(int code);

    /** na_config_init's values into a record of {@link AtpConfig#NATIVE}'s slots. */
    static native int configDefaults(long[] config);

    /**
     * Opens an engine from a record of {@link AtpConfig#NATIVE}'s slots. Returns the engine handle
     * (&gt; 0) or a negative error; errOut[0] gets the engine's message on failure.
     */
    static native long engineOpen(long[] config, String bindAddress, String[] errOut);

    static native int engineClose(long engine);

    static native int localPort(long engine);

    static native int sessionOpen(
            long engine, long sessionId, byte[] key, String host, int port, boolean initiator);

    static native int sessionSetPeer(long engine, long sessionId, String host, int port);

    static native int sessionClose(long engine, long sessionId);

    static native int jobStart(
            long engine,
            long sessionId,
            int job,
            long[] groupIds,
            int[] sizes,
            double[] msrs,
            int n,
            boolean mrdf,
            long deadlineNs);

    /** timeoutMs: 0 = never wait, &lt; 0 = wait forever. */
    static native int submitAddress(
            long engine,
            long sessionId,
            int job,
            int group,
            int index,
            long address,
            int len,
            int timeoutMs);

    static native int submitBuffer(
            long engine,
            long sessionId,
            int job,
            int group,
            int index,
            ByteBuffer buf,
            int offset,
            int len,
            int timeoutMs);

    /** Returns how many descriptors were accepted; the first refused one carries its status. */
    static native int submitBatch(
            long engine, long sessionId, int job, long descAddress, int count, int timeoutMs);

    static native int jobUpdateMsr(
            long engine, long sessionId, int job, int[] groups, double[] msrs, int n);

    static native int jobCancel(long engine, long sessionId, int job);

    /**
     * Drains up to max events into out (EVENT_RECORD_BYTES each). A MESSAGE record carries the
     * message's address (EV_DATA) and length (EV_LEN) in engine memory: no Java object is created
     * per message.
     */
    static native int pollEvents(long engine, ByteBuffer out, int max, int timeoutMs);

    static native int messageRelease(long engine, long handle);

    /**
     * Releases {@code count} handles stored as native-order longs at {@code address} (8-byte
     * aligned) in one crossing. Returns how many were released (unknown handles are skipped) or a
     * negative error.
     */
    static native int messageReleaseBatch(long engine, long address, int count);

    /**
     * A JNI NewDirectByteBuffer over (address, len), or null: only for
     * NativeMessageBuf.nioBuffer().
     */
    static native ByteBuffer wrapAddress(long address, long len);

    static native long directAddress(ByteBuffer buf);

    static native int reportInfo(long report, long[] out);

    static native int reportGroup(long report, int index, long[] out);

    static native int reportGroupRanges(
            long report,
            int index,
            int[] deliveredFirsts,
            int[] deliveredLasts,
            int[] lostFirsts,
            int[] lostLasts);

    static native int reportFree(long report);

    static native int engineStats(long engine, long[] out);

    /**
     * Bytes in use by the process's malloc (glibc mallinfo2), -1 when unknown: a native-memory leak
     * probe.
     */
    static native long mallocInUse();
}

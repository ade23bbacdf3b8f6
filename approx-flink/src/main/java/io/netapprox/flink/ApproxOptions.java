package io.netapprox.flink;

import java.time.Duration;
import java.util.List;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

/**
 * The {@code approx.*} options of a Flink job, read from the job's configuration when the query is
 * built ({@code flink run -Dapprox.enabled=true}, {@code
 * StreamExecutionEnvironment.getExecutionEnvironment(conf)}, or the client's config file). {@link
 * ApproxConfig} validates them; the README's table lists the same keys, defaults and meanings.
 */
public final class ApproxOptions {
    private ApproxOptions() {}

    public static final String PREFIX = "approx.";

    public static final ConfigOption<Boolean> ENABLED =
            ConfigOptions.key("approx.enabled")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "true: approximate queries exchange their records over ATP; false: the exact"
                                    + " keyBy().window().aggregate() topology (approximate=false in every result)");

    public static final ConfigOption<Double> ERROR_BOUND =
            ConfigOptions.key("approx.errorBound")
                    .doubleType()
                    .defaultValue(0.05)
                    .withDescription(
                            "default relative error bound e_max of a query that sets none, in (0, 1)");

    public static final ConfigOption<Double> CONFIDENCE =
            ConfigOptions.key("approx.confidence")
                    .doubleType()
                    .defaultValue(0.95)
                    .withDescription("default confidence of a query that sets none, in (0, 1)");

    public static final ConfigOption<Integer> RECORDS_PER_MESSAGE =
            ConfigOptions.key("approx.recordsPerMessage")
                    .intType()
                    .defaultValue(16)
                    .withDescription(
                            "records framed into one ATP message (the sampling unit), 1 to 65536");

    public static final ConfigOption<String> PLANNING =
            ConfigOptions.key("approx.planning")
                    .stringType()
                    .defaultValue("conservative")
                    .withDescription(
                            "conservative: every sender's share of a (window, group) meets e_max on its"
                                    + " own, so the group does for any split of its records over the senders;"
                                    + " balanced: each of the P senders plans its share for e_max*sqrt(P),"
                                    + " which keeps e_max only when the shares are equal (about P times"
                                    + " smaller samples)");

    public static final ConfigOption<String> SUBMIT =
            ConfigOptions.key("approx.submit")
                    .stringType()
                    .defaultValue("slack")
                    .withDescription(
                            "slack: a sender submits every message of an epoch; each group's planned sample"
                                    + " (ceil(MSR*N)) goes first, in the class its slack allows, escalating"
                                    + " towards class 0 as the group falls behind delivering it by"
                                    + " approx.epochDeadline, and the rest only in the lowest class (where the"
                                    + " path is free); ATP stops each group at its target. target: only"
                                    + " ceil(MSR*N) messages per group are sent, reliably (losses are"
                                    + " retransmitted), in class 0; all: every message in the job's slack class,"
                                    + " which strict priority serves only when class 0 is idle");

    public static final ConfigOption<Duration> EPOCH_DEADLINE =
            ConfigOptions.key("approx.epochDeadline")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(1))
                    .withDescription(
                            "submit=slack: the time an epoch's planned sample has to arrive, from the start of"
                                    + " its transfer; a group that delivered nothing is in class 0 after 7/8 of it,"
                                    + " however busy class 0 is; 1 ms to approx.epochTimeout (unset: 1 s or"
                                    + " approx.epochTimeout if shorter)");

    public static final ConfigOption<Duration> EPOCH_TIMEOUT =
            ConfigOptions.key("approx.epochTimeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(30))
                    .withDescription(
                            "the receiver waits at most this long, from the moment the epoch's peer is"
                                    + " connected, for its groups to reach their targets; then it goes on with"
                                    + " what arrived (a watermark is held at most the connection time plus this)");

    public static final ConfigOption<Integer> EPOCH_MAX_RECORDS =
            ConfigOptions.key("approx.epochMaxRecords")
                    .intType()
                    .defaultValue(1_000_000)
                    .withDescription(
                            "a sender ends its epoch early once it holds this many records (memory bound)");

    public static final ConfigOption<Duration> FLUSH_INTERVAL =
            ConfigOptions.key("approx.flushInterval")
                    .durationType()
                    .defaultValue(Duration.ZERO)
                    .withDescription(
                            "a sender also ends its epoch every this long (processing time) while windows are"
                                    + " open, so receivers pull a window's records during the window and only the"
                                    + " tail is left when it closes; 0 = epochs end only with their windows,"
                                    + " checkpoints and epochMaxRecords");

    public static final ConfigOption<MemorySize> SEND_BUFFER =
            ConfigOptions.key("approx.sendBuffer")
                    .memoryType()
                    .defaultValue(MemorySize.ofMebiBytes(128))
                    .withDescription(
                            "per TaskManager: encoded epochs waiting to be pulled by receivers; a sender whose"
                                    + " epoch does not fit waits (backpressure)");

    public static final ConfigOption<MemorySize> RECEIVE_WINDOW =
            ConfigOptions.key("approx.receiveWindow")
                    .memoryType()
                    .defaultValue(MemorySize.ofMebiBytes(64))
                    .withDescription(
                            "per ATP session: messages delivered but not yet accumulated by the receiving task;"
                                    + " the window a sender may fill (credit), so a slow receiver slows its senders");

    public static final ConfigOption<Integer> CONCURRENT_PULLS =
            ConfigOptions.key("approx.concurrentPulls")
                    .intType()
                    .defaultValue(1)
                    .withDescription(
                            "epochs a TaskManager pulls from one other TaskManager at once (one ATP"
                                    + " job each); the rest wait their turn");

    public static final ConfigOption<Boolean> PUSH_TAIL =
            ConfigOptions.key("approx.pushTail")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "true: a sender pushes the epoch a watermark ends (a window's tail) right behind"
                                    + " its manifest to receivers whose TaskManager it already has a session with,"
                                    + " so it arrives without a request; false: every epoch is pulled");

    public static final ConfigOption<Duration> PUSH_WAIT =
            ConfigOptions.key("approx.pushWait")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(2))
                    .withDescription(
                            "a receiver whose manifest says its epoch is pushed waits at most this long for"
                                    + " the push to be announced (refused or failed pushes never are), then pulls"
                                    + " the epoch; 1 ms to approx.epochTimeout (unset: 2 s or approx.epochTimeout if"
                                    + " shorter). A push that arrived waits for its"
                                    + " manifest until approx.epochTimeout from its acceptance");

    public static final ConfigOption<Integer> MAX_PUSHED_JOBS =
            ConfigOptions.key("approx.maxPushedJobs")
                    .intType()
                    .defaultValue(16)
                    .withDescription(
                            "per TaskManager: pushed epochs received at once (a receiving push budget);"
                                    + " one more is refused and its receiver pulls it after approx.pushWait;"
                                    + " 0 to 1024 (0 refuses every push: use approx.pushTail=false instead)");

    public static final ConfigOption<Integer> MAX_PUSHED_MESSAGES =
            ConfigOptions.key("approx.maxPushedMessages")
                    .intType()
                    .defaultValue(65536)
                    .withDescription(
                            "per TaskManager: ATP messages (announced N) of the pushed epochs received at"
                                    + " once; a push that would exceed it is refused and pulled; 1 to"
                                    + " 2147483647");

    public static final ConfigOption<String> BIND_ADDRESS =
            ConfigOptions.key("approx.bindAddress")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "numeric address the TaskManager's ATP engine and control server bind to (default:"
                                    + " the TaskManager's external address)");

    public static final ConfigOption<Integer> CONTROL_PORT =
            ConfigOptions.key("approx.controlPort")
                    .intType()
                    .defaultValue(0)
                    .withDescription(
                            "TCP control port per TaskManager; 0 = ephemeral (needed when TaskManagers share a"
                                    + " host)");

    public static final ConfigOption<String> DATA_PLANE =
            ConfigOptions.key("approx.dataPlane")
                    .stringType()
                    .defaultValue("auto")
                    .withDescription(
                            "how TaskManagers exchange records: auto (ATP, falling back to TCP with one"
                                    + " WARN when the native library cannot load here or a peer does not"
                                    + " answer over UDP within approx.udpProbeTimeout), atp (ATP only: fails"
                                    + " naming the cause instead), tcp (one TCP connection per peer: the"
                                    + " network-oblivious baseline, no native library)");

    public static final ConfigOption<String> TCP_SEND_POLICY =
            ConfigOptions.key("approx.tcpSendPolicy")
                    .stringType()
                    .defaultValue("earlySend")
                    .withDescription(
                            "what the TCP data plane sends of an epoch: earlySend (in send order until the"
                                    + " receiver has every group's target) or sampleSend (only each group's"
                                    + " target)");

    public static final ConfigOption<Duration> UDP_PROBE_TIMEOUT =
            ConfigOptions.key("approx.udpProbeTimeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(2))
                    .withDescription(
                            "approx.dataPlane=auto: a peer that does not answer a UDP probe within this"
                                    + " long uses TCP; 0 = no probe; at most 60 s");

    public static final ConfigOption<Long> LINE_RATE_BPS =
            ConfigOptions.key("approx.lineRateBps")
                    .longType()
                    .defaultValue(10_000_000_000L)
                    .withDescription("R_max of ATP rate control, bits/s (ATP only)");

    public static final ConfigOption<String> MODE =
            ConfigOptions.key("approx.mode")
                    .stringType()
                    .defaultValue("FULL")
                    .withDescription(
                            "ATP variant: FULL, BASE, RC, RC_MRDF, FIX_TLR, FIX_PRIO (ATP only)");

    public static final ConfigOption<String> DSCP =
            ConfigOptions.key("approx.dscp")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "8 comma-separated DSCP values of priority classes 0..7 (class 0 = exact); default"
                                    + " the engine's 46,40,32,24,18,16,10,8 (ATP only)");

    public static final ConfigOption<String> AUTH_SECRET =
            ConfigOptions.key("approx.authSecret")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "shared secret (>= 16 bytes) authenticating the TaskManagers' control sessions;"
                                    + " default: a random secret per job");

    public static final ConfigOption<Duration> PEER_DEATH_TIMEOUT =
            ConfigOptions.key("approx.peerDeathTimeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(5))
                    .withDescription("ATP peer-death timeout (ATP only)");

    public static final ConfigOption<Duration> CONNECT_TIMEOUT =
            ConfigOptions.key("approx.connectTimeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription("control-plane connect timeout");

    public static final ConfigOption<Integer> SERVE_THREADS =
            ConfigOptions.key("approx.serveThreads")
                    .intType()
                    .defaultValue(4)
                    .withDescription("threads per TaskManager sending epochs over ATP");

    public static final ConfigOption<Double> FAULT_DROP_OUTGOING =
            ConfigOptions.key("approx.faultDropOutgoing")
                    .doubleType()
                    .defaultValue(0.0)
                    .withDescription(
                            "testing/benchmarks: engine fault injection, fraction of outgoing ATP datagrams"
                                    + " dropped, in [0, 1) (ATP only)");

    public static final ConfigOption<Long> FAULT_SEED =
            ConfigOptions.key("approx.faultSeed")
                    .longType()
                    .defaultValue(1L)
                    .withDescription("seed of the fault injection");

    /** Every option, in the README's order. */
    public static final List<ConfigOption<?>> ALL =
            List.of(
                    ENABLED,
                    ERROR_BOUND,
                    CONFIDENCE,
                    RECORDS_PER_MESSAGE,
                    PLANNING,
                    SUBMIT,
                    EPOCH_DEADLINE,
                    EPOCH_TIMEOUT,
                    EPOCH_MAX_RECORDS,
                    FLUSH_INTERVAL,
                    SEND_BUFFER,
                    RECEIVE_WINDOW,
                    CONCURRENT_PULLS,
                    PUSH_TAIL,
                    PUSH_WAIT,
                    MAX_PUSHED_JOBS,
                    MAX_PUSHED_MESSAGES,
                    BIND_ADDRESS,
                    CONTROL_PORT,
                    DATA_PLANE,
                    TCP_SEND_POLICY,
                    UDP_PROBE_TIMEOUT,
                    LINE_RATE_BPS,
                    MODE,
                    DSCP,
                    AUTH_SECRET,
                    PEER_DEATH_TIMEOUT,
                    CONNECT_TIMEOUT,
                    SERVE_THREADS,
                    FAULT_DROP_OUTGOING,
                    FAULT_SEED);
}

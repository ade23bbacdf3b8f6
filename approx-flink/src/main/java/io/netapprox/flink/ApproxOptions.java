package io.netapprox.flink;

import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
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

    /**
     * The transport options ({@code approx.bindAddress}, {@code approx.dataPlane}, {@code
     * approx.lineRateBps}, ...) as Flink options, generated from approx-core's {@link
     * TransportOptions} in {@link Style#FLINK}: key, type, default and description come from that
     * one definition, which also parses and validates them ({@link ApproxConfig}).
     */
    public static final List<ConfigOption<?>> TRANSPORT =
            TransportOptions.ALL.stream()
                    .<ConfigOption<?>>map(ApproxOptions::transportOption)
                    .toList();

    /** Every option: Flink's own, in the README's order, then the transport options. */
    public static final List<ConfigOption<?>> ALL =
            Stream.concat(
                            Stream.of(
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
                                    CONCURRENT_PULLS,
                                    PUSH_TAIL,
                                    PUSH_WAIT),
                            TRANSPORT.stream())
                    .toList();

    /** The Flink option of a transport option, typed by its kind. */
    static ConfigOption<?> transportOption(TransportOptions.Option o) {
        ConfigOptions.OptionBuilder b = ConfigOptions.key(Style.FLINK.key(o));
        String d = o.description(Style.FLINK);
        Object def = o.defaultValue();
        return switch (o.kind()) {
            case BOOLEAN -> b.booleanType().defaultValue((Boolean) def).withDescription(d);
            case INTEGER ->
                    o.min() >= Integer.MIN_VALUE && o.max() <= Integer.MAX_VALUE
                            ? b.intType().defaultValue((int) (long) (Long) def).withDescription(d)
                            : b.longType().defaultValue((Long) def).withDescription(d);
            case DECIMAL -> b.doubleType().defaultValue((Double) def).withDescription(d);
            case DURATION -> b.durationType().defaultValue((Duration) def).withDescription(d);
            case BYTES ->
                    b.memoryType().defaultValue(new MemorySize((Long) def)).withDescription(d);
            case CHOICE ->
                    b.stringType().defaultValue(o.format(Style.FLINK, def)).withDescription(d);
            case ADDRESS, DSCP, SECRET -> b.stringType().noDefaultValue().withDescription(d);
        };
    }
}

package io.netapprox.kafka.relay;

import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.core.transport.TcpSendPolicy;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The relay as a process: {@code java -jar approx-kafka-relay.jar --bootstrap 127.0.0.1:9092
 * --broker-id 1 --listen 0.0.0.0:7390 --secret-file /etc/netapprox/secret}. Runs until SIGINT or
 * SIGTERM; logs its counters every {@code --metrics-interval} seconds. Exit codes: 0 after a
 * signal, 1 when the relay cannot start, 2 for bad arguments.
 */
@Command(
        name = "approx-kafka-relay",
        mixinStandardHelpOptions = true,
        version = "NetApprox Kafka relay 0.1.0",
        sortOptions = false,
        description = {
            "Serves approximate Kafka consumers (approx.enable=true) the partitions the broker"
                    + " beside it leads: reads them over loopback, samples them per window and"
                    + " stratum, sends the samples over ATP (or TCP, --data-plane) and the exact"
                    + " counts over the authenticated control plane."
        })
public final class RelayMain implements Callable<Integer> {
    @Option(
            names = "--bootstrap",
            required = true,
            paramLabel = "HOST:PORT",
            description = "the broker beside the relay (e.g. 127.0.0.1:9092)")
    String bootstrap;

    @Option(
            names = "--broker-id",
            defaultValue = "-1",
            description =
                    "node id of that broker: only partitions it leads are served (-1: any; for a"
                            + " single-broker cluster). Default: ${DEFAULT-VALUE}")
    int brokerId;

    @Option(
            names = "--listen",
            defaultValue = RelayConfig.DEFAULT_LISTEN,
            paramLabel = "HOST:PORT",
            description =
                    "control plane address consumers connect to (approx.relay.port /"
                            + " approx.relay.address.<id>). Default: ${DEFAULT-VALUE}")
    String listen;

    @Option(
            names = "--data-port",
            defaultValue = "-1",
            description =
                    "UDP port of the ATP data plane (-1: the listen port). Default: ${DEFAULT-VALUE}")
    int dataPort;

    @Option(
            names = "--data-plane",
            defaultValue = "auto",
            paramLabel = "auto|atp|tcp",
            description =
                    "auto: ATP, and TCP for a consumer that runs TCP only (approx.data.plane=tcp) or"
                            + " cannot reach the relay over UDP, or for every consumer when the native"
                            + " library cannot load here (one WARN); atp: ATP only; tcp: no ATP"
                            + " engine, every consumer over TCP (the network-oblivious baseline)."
                            + " Default: ${DEFAULT-VALUE}")
    String dataPlane;

    @Option(
            names = "--tcp-send-policy",
            defaultValue = "earlySend",
            paramLabel = "earlySend|sampleSend",
            description =
                    "what the TCP data plane sends of a segment: earlySend (in order until the"
                            + " consumer has every stratum's target) or sampleSend (only the targets)."
                            + " Default: ${DEFAULT-VALUE}")
    String tcpSendPolicy;

    @Option(
            names = "--transport",
            paramLabel = "KEY=VALUE",
            description =
                    "a transport option in the consumers' naming (repeatable): approx.dscp,"
                            + " approx.line.rate.bps, approx.mode, approx.peer.death.timeout.ms,"
                            + " approx.receive.window.bytes, approx.start.before.accept,"
                            + " approx.fault.drop.outgoing, approx.fault.seed (docs/kafka.md)")
    Map<String, String> transport;

    @Option(
            names = "--secret-file",
            paramLabel = "FILE",
            description =
                    "shared secret (>= 16 bytes; consumers set approx.auth.secret or"
                            + " approx.auth.secret.file to the same) that consumers must prove")
    Path secretFile;

    @Option(
            names = "--no-auth",
            description = "serve consumers without authentication (only on a trusted network)")
    boolean noAuth;

    @Option(
            names = "--consumer-config",
            paramLabel = "FILE",
            description =
                    "properties for the relay's own Kafka consumers (e.g. security.protocol, sasl.*)")
    Path consumerConfig;

    @Option(
            names = "--authorization",
            defaultValue = "kafka",
            paramLabel = "kafka|none",
            description =
                    "kafka: read each consumer's partitions as the consumer's own Kafka principal"
                            + " (its delegation token; --consumer-config must set security.protocol"
                            + " SASL_PLAINTEXT or SASL_SSL), so the broker's ACLs decide. none: read"
                            + " as the relay's own identity - anyone with the secret reads what it"
                            + " may (only on a cluster without ACLs). Default: ${DEFAULT-VALUE}")
    String authorization;

    @Option(
            names = "--max-pull-wait-ms",
            defaultValue = "" + RelayConfig.DEFAULT_MAX_PULL_WAIT_MS,
            description =
                    "longest a pull with nothing new is held (a longer approx.relay.pull.wait.ms"
                            + " is cut to it). Default: ${DEFAULT-VALUE}")
    int maxPullWaitMs;

    @Option(
            names = "--segment-deadline-ms",
            defaultValue = "" + RelayConfig.DEFAULT_SEGMENT_DEADLINE_MS,
            description =
                    "ATP sending policy of a segment: > 0 (slack) sends each cell's planned sample"
                            + " first, escalating towards class 0 as the cell falls behind delivering"
                            + " it within this many ms, the other candidates only in the lowest class;"
                            + " 0 (all) sends every candidate in the segment's slack class."
                            + " Default: ${DEFAULT-VALUE}")
    int segmentDeadlineMs;

    @Option(
            names = "--max-streams-per-client",
            description =
                    "streams one client (IP address) may have open. Default: a quarter of"
                            + " --max-sessions")
    Integer maxStreamsPerClient;

    @Option(
            names = "--max-pulls-per-client",
            description =
                    "requests of one client (IP address) served at once; more are answered"
                            + " THROTTLED and retried by the consumer. Default: half of"
                            + " --serve-threads")
    Integer maxPullsPerClient;

    @Option(
            names = "--max-segment-bytes",
            defaultValue = "" + RelayConfig.DEFAULT_MAX_SEGMENT_BYTES,
            description =
                    "a segment closes once its samples hold this many bytes. Default: ${DEFAULT-VALUE}")
    long maxSegmentBytes;

    @Option(
            names = "--max-sessions",
            defaultValue = "" + RelayConfig.DEFAULT_MAX_SESSIONS,
            description = "consumer streams served at once. Default: ${DEFAULT-VALUE}")
    int maxSessions;

    @Option(
            names = "--serve-threads",
            defaultValue = "" + RelayConfig.DEFAULT_SERVE_THREADS,
            description = "pulls served at once (more wait in a queue). Default: ${DEFAULT-VALUE}")
    int serveThreads;

    @Option(
            names = "--read-threads",
            defaultValue = "" + RelayConfig.DEFAULT_READ_THREADS,
            description =
                    "log readers per consumer stream (its partitions read and sampled in"
                            + " parallel). Default: ${DEFAULT-VALUE}")
    int readThreads;

    @Option(
            names = "--metrics-interval",
            defaultValue = "60",
            description =
                    "seconds between two log lines of counters (0: never). Default: ${DEFAULT-VALUE}")
    int metricsInterval;

    private final CountDownLatch stop = new CountDownLatch(1);
    private volatile KafkaRelay running;

    public static void main(String[] args) {
        defaultLogging();
        System.exit(commandLine(new RelayMain()).execute(args));
    }

    static CommandLine commandLine(RelayMain main) {
        return new CommandLine(main)
                .setExecutionExceptionHandler(
                        (e, cmd, parsed) -> {
                            cmd.getErr().println("approx-kafka-relay: " + e.getMessage());
                            return e instanceof IllegalArgumentException ? 2 : 1;
                        });
    }

    /**
     * The relay these arguments describe, validated (IllegalArgumentException names the option).
     */
    RelayConfig config() throws IOException {
        if (secretFile == null && !noAuth) {
            throw new IllegalArgumentException(
                    "--secret-file is required (or --no-auth on a trusted network)");
        }
        if (secretFile != null && noAuth) {
            throw new IllegalArgumentException("--secret-file and --no-auth exclude each other");
        }
        RelayConfig.Builder b =
                RelayConfig.builder(bootstrap)
                        .brokerId(brokerId)
                        .listen(listen)
                        .dataPort(dataPort)
                        .maxSegmentBytes(maxSegmentBytes)
                        .maxSessions(maxSessions)
                        .serveThreads(serveThreads)
                        .readThreads(readThreads)
                        .maxPullWaitMs(maxPullWaitMs)
                        .segmentDeadlineMs(segmentDeadlineMs)
                        .dataPlane(option("--data-plane", dataPlane, DataPlaneMode::parse))
                        .tcpSendPolicy(
                                option("--tcp-send-policy", tcpSendPolicy, TcpSendPolicy::parse))
                        .authorization(authorization(authorization));
        if (transport != null) {
            for (String k : transport.keySet()) {
                if (!TransportOptions.isKey(Style.KAFKA, k)) {
                    throw new IllegalArgumentException(
                            "--transport "
                                    + k
                                    + ": not a transport option (e.g. approx.dscp,"
                                    + " approx.line.rate.bps)");
                }
            }
            b.transport(TransportOptions.parse(Style.KAFKA, transport));
        }
        if (maxStreamsPerClient != null) {
            b.maxStreamsPerClient(maxStreamsPerClient);
        }
        if (maxPullsPerClient != null) {
            b.maxPullsPerClient(maxPullsPerClient);
        }
        if (secretFile != null) {
            b.secret(SecretFile.read(secretFile));
        }
        if (consumerConfig != null) {
            Properties p = new Properties();
            try (InputStream in = Files.newInputStream(consumerConfig)) {
                p.load(in);
            }
            Map<String, Object> m = new HashMap<>();
            p.stringPropertyNames().forEach(k -> m.put(k, p.getProperty(k)));
            b.consumerOverrides(m);
        }
        return b.build();
    }

    /** approx-core's parser of the value, its message naming the option. */
    private static <T> T option(String name, String value, Function<String, T> parser) {
        try {
            return parser.apply(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
        }
    }

    private static RelayConfig.Authorization authorization(String s) {
        return switch (s.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "kafka" -> RelayConfig.Authorization.KAFKA;
            case "none" -> RelayConfig.Authorization.NONE;
            default ->
                    throw new IllegalArgumentException(
                            "--authorization must be kafka or none, got " + s);
        };
    }

    @Override
    public Integer call() throws Exception {
        KafkaRelay relay = KafkaRelay.start(config());
        running = relay;
        Thread hook =
                new Thread(
                        () -> {
                            stop.countDown();
                            relay.close();
                        },
                        "relay-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            while (!stop.await(metricsInterval > 0 ? metricsInterval : 3600, TimeUnit.SECONDS)) {
                if (metricsInterval > 0) {
                    org.slf4j.LoggerFactory.getLogger(RelayMain.class)
                            .info("{} sessions, {}", relay.sessionCount(), relay.metrics());
                }
            }
        } finally {
            relay.close();
        }
        return 0;
    }

    /** The relay {@link #call} started, or null. */
    KafkaRelay running() {
        return running;
    }

    /** Ends {@link #call} as a signal would. */
    void stop() {
        stop.countDown();
    }

    /** INFO for the relay, WARN for Kafka's client, with times: unless the user set otherwise. */
    private static void defaultLogging() {
        setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", "info");
        setIfAbsent("org.slf4j.simpleLogger.log.org.apache.kafka", "warn");
        setIfAbsent("org.slf4j.simpleLogger.showDateTime", "true");
        setIfAbsent("org.slf4j.simpleLogger.dateTimeFormat", "yyyy-MM-dd HH:mm:ss.SSS");
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}

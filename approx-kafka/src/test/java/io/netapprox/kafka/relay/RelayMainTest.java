package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.core.transport.TcpSendPolicy;
import io.netapprox.kafka.ApproxConsumers;
import io.netapprox.kafka.testkit.KafkaBroker;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The runnable relay's command line: validation, and a consumer served by the relay it starts. */
class RelayMainTest {
    @TempDir Path dir;

    private static int run(String... args) {
        StringWriter err = new StringWriter();
        CommandLine cl = RelayMain.commandLine(new RelayMain());
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        lastErr = err.toString();
        return code;
    }

    private static String lastErr;

    @Test
    void badArgumentsExitWith2AndSayWhy() throws Exception {
        assertEquals(2, run("--listen", "127.0.0.1:0"));
        assertTrue(lastErr.contains("--bootstrap"), lastErr);
        assertEquals(2, run("--bootstrap", "127.0.0.1:9"));
        assertTrue(lastErr.contains("--secret-file is required"), lastErr);
        Path shortSecret = Files.writeString(dir.resolve("short"), "tooshort\n");
        assertEquals(2, run("--bootstrap", "127.0.0.1:9", "--secret-file", shortSecret.toString()));
        assertTrue(lastErr.contains("at least 16 bytes"), lastErr);
        assertEquals(
                2,
                run(
                        "--bootstrap",
                        "127.0.0.1:9",
                        "--secret-file",
                        shortSecret.toString(),
                        "--no-auth"));
        assertTrue(lastErr.contains("exclude each other"), lastErr);
        assertEquals(2, run("--bootstrap", "127.0.0.1:9", "--no-auth", "--listen", "nohostport"));
        assertTrue(lastErr.contains("host:port"), lastErr);
        // reading as each consumer needs a SASL listener for the delegation tokens
        assertEquals(2, run("--bootstrap", "127.0.0.1:9", "--no-auth"));
        assertTrue(lastErr.contains("security.protocol"), lastErr);
        assertTrue(lastErr.contains("authorization=none"), lastErr);
        assertEquals(2, run("--bootstrap", "127.0.0.1:9", "--no-auth", "--authorization", "x"));
        assertTrue(lastErr.contains("--authorization must be kafka or none"), lastErr);
        assertEquals(
                2,
                run(
                        "--bootstrap",
                        "127.0.0.1:9",
                        "--no-auth",
                        "--authorization",
                        "none",
                        "--max-pull-wait-ms",
                        "0"));
        assertTrue(lastErr.contains("maxPullWaitMs"), lastErr);
        assertEquals(
                2,
                run(
                        "--bootstrap",
                        "127.0.0.1:9",
                        "--no-auth",
                        "--authorization",
                        "none",
                        "--max-pulls-per-client",
                        "65"));
        assertTrue(lastErr.contains("maxPullsPerClient"), lastErr);
        String[] none = {"--bootstrap", "127.0.0.1:9", "--no-auth", "--authorization", "none"};
        assertEquals(2, run(concat(none, "--data-plane", "udp")));
        assertTrue(lastErr.contains("--data-plane"), lastErr);
        assertTrue(lastErr.contains("atp, tcp, auto"), lastErr);
        assertEquals(2, run(concat(none, "--tcp-send-policy", "lateSend")));
        assertTrue(lastErr.contains("--tcp-send-policy"), lastErr);
        assertTrue(lastErr.contains("earlySend, sampleSend"), lastErr);
        assertEquals(2, run(concat(none, "--segment-deadline-ms", "-1")));
        assertTrue(lastErr.contains("segmentDeadlineMs"), lastErr);
        assertEquals(2, run(concat(none, "--segment-deadline-ms", "600001")));
        assertTrue(lastErr.contains("segmentDeadlineMs"), lastErr);
    }

    @Test
    void theSendingPolicyReachesTheRelayConfig() throws Exception {
        String[] none = {"--bootstrap", "127.0.0.1:9", "--no-auth", "--authorization", "none"};
        RelayMain defaults = new RelayMain();
        RelayMain.commandLine(defaults).parseArgs(none);
        assertEquals(
                RelayConfig.DEFAULT_SEGMENT_DEADLINE_MS, defaults.config().segmentDeadlineMs());
        RelayMain all = new RelayMain();
        RelayMain.commandLine(all).parseArgs(concat(none, "--segment-deadline-ms", "0"));
        RelayConfig a = all.config();
        assertEquals(0, a.segmentDeadlineMs());
        assertTrue(a.toString().contains("segmentDeadlineMs=0"), a.toString());
    }

    private static String[] concat(String[] a, String... b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    @Test
    void transportOptionsReachTheRelaysTransportAndTheRelaysOwnStayItsOwn() throws Exception {
        String[] none = {"--bootstrap", "127.0.0.1:9", "--no-auth", "--authorization", "none"};
        RelayMain m = new RelayMain();
        RelayMain.commandLine(m)
                .parseArgs(
                        concat(
                                none,
                                "--transport",
                                "approx.dscp=8,10,12,14,16,18,20,22",
                                "--transport",
                                "approx.line.rate.bps=2000000000",
                                "--transport",
                                "approx.start.before.accept=false"));
        RelayConfig c = m.config();
        assertEquals(2_000_000_000L, c.transport().lineRateBps());
        assertEquals(22, c.transport().dscp()[7]);
        assertFalse(c.transport().startBeforeAccept());
        assertTrue(c.toString().contains("approx.line.rate.bps=2000000000"), c.toString());
        // a bad value names the key; the relay's own settings and the consumer's are refused
        assertEquals(2, run(concat(none, "--transport", "approx.dscp=1,2")));
        assertTrue(lastErr.contains("approx.dscp=1,2"), lastErr);
        assertEquals(2, run(concat(none, "--transport", "approx.data.plane=tcp")));
        assertTrue(lastErr.contains("--data-plane"), lastErr);
        assertEquals(2, run(concat(none, "--transport", "approx.udp.probe.timeout.ms=0")));
        assertTrue(lastErr.contains("consumer"), lastErr);
        assertEquals(2, run(concat(none, "--transport", "approx.dscpp=1")));
        assertTrue(lastErr.contains("approx.dscpp"), lastErr);
    }

    @Test
    void theDataPlaneOptionsReachTheRelayConfig() throws Exception {
        String[] none = {"--bootstrap", "127.0.0.1:9", "--no-auth", "--authorization", "none"};
        RelayMain defaults = new RelayMain();
        RelayMain.commandLine(defaults).parseArgs(none);
        RelayConfig d = defaults.config();
        assertEquals(DataPlaneMode.AUTO, d.dataPlane());
        assertEquals(TcpSendPolicy.EARLY_SEND, d.tcpSendPolicy());
        RelayMain tcp = new RelayMain();
        RelayMain.commandLine(tcp)
                .parseArgs(concat(none, "--data-plane", "tcp", "--tcp-send-policy", "sampleSend"));
        RelayConfig t = tcp.config();
        assertEquals(DataPlaneMode.TCP, t.dataPlane());
        assertEquals(TcpSendPolicy.SAMPLE_SEND, t.tcpSendPolicy());
        assertTrue(t.toString().contains("dataPlane=tcp, tcpSendPolicy=sampleSend"), t.toString());
    }

    @Test
    void aConsumerWithTheSecretFileReadsThroughTheRelayTheCommandStarts() throws Exception {
        String topic = KafkaBroker.unique("main");
        KafkaBroker.shared().createTopic(topic, 1);
        try (KafkaProducer<String, String> p = KafkaBroker.shared().stringProducer()) {
            for (int i = 0; i < 300; i++) {
                p.send(new ProducerRecord<>(topic, 0, "k" + i, "v" + i)).get();
            }
        }
        Path secret = Files.writeString(dir.resolve("secret"), "relay-main-test-secret-0123\n");
        String bootstrap = KafkaBroker.shared().bootstrapServers();
        RelayMain main = new RelayMain();
        CommandLine cl = RelayMain.commandLine(main);
        CompletableFuture<Integer> exit =
                CompletableFuture.supplyAsync(
                        () ->
                                cl.execute(
                                        "--bootstrap",
                                        bootstrap,
                                        "--listen",
                                        "127.0.0.1:0",
                                        "--data-port",
                                        "0",
                                        "--secret-file",
                                        secret.toString(),
                                        "--authorization",
                                        "none",
                                        "--metrics-interval",
                                        "1"));
        // liveness bounds (a loaded 2-core machine), not timings
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (main.running() == null && !exit.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        KafkaRelay relay = main.running();
        assertNotNull(relay, "the relay started");
        Properties props = KafkaBroker.shared().stringConsumerProps(KafkaBroker.unique("g"));
        props.put("approx.enable", "true");
        props.put("approx.auth.secret.file", secret.toString());
        props.put("approx.emax", "0.001"); // cells this small are taken whole
        props.put("approx.window.ms", "1000"); // records of now: their window closes soon
        props.put("approx.window.grace.ms", "0");
        for (int id : KafkaBroker.shared().brokerIds()) {
            props.put("approx.relay.address." + id, relay.address());
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        int seen = 0;
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        try (Consumer<String, String> c = ApproxConsumers.create(props)) {
            c.assign(List.of(tp));
            while (c.position(tp) < 300 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                    assertEquals("v" + r.offset(), r.value());
                    seen++;
                }
            }
        }
        assertEquals(300, seen);
        main.stop();
        assertEquals(0, exit.get(120, TimeUnit.SECONDS));
        assertEquals(1, relay.metrics().sessionsOpened());
    }
}

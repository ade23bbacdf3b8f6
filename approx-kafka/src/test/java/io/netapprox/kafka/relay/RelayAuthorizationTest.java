package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.kafka.ApproxConsumerRecords;
import io.netapprox.kafka.ApproxConsumers;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A relay with authorization=kafka serves a consumer only what the consumer's own Kafka principal
 * may read (issue 29). A real KRaft broker with Kafka's {@code StandardAuthorizer}, SASL (SCRAM
 * users, delegation tokens) and ACLs ({@link KafkaBroker#secured()}); the relay itself has no Kafka
 * identity and no ACL at all: it reads each stream with the consumer's delegation token.
 *
 * <p>Before the fix the relay read every stream under its own identity: a consumer holding the
 * shared secret read a topic its principal has no ACL for (the regression tests below failed on
 * that code, the relay running as the super user, with the denied topic's 100 records returned).
 */
class RelayAuthorizationTest {
    private static final long LIVENESS_S = 180;
    private static final String ALICE = "alice";
    private static final String ALICE_PASSWORD = "alice-secret-0123";
    private static final int RECORDS = 100;

    private static KafkaBroker broker;
    private static KafkaRelay relay;
    private static String granted;
    private static String denied;
    private static String describeOnly;
    private static String group;

    @BeforeAll
    static void setUp() throws Exception {
        broker = KafkaBroker.secured();
        granted = topic("granted");
        denied = topic("denied");
        describeOnly = topic("describe-only");
        group = KafkaBroker.unique("alice-group");
        broker.addScramUser(ALICE, ALICE_PASSWORD);
        broker.allow(ALICE, ResourceType.TOPIC, granted, AclOperation.READ);
        broker.allow(ALICE, ResourceType.TOPIC, describeOnly, AclOperation.DESCRIBE);
        broker.allow(ALICE, ResourceType.GROUP, group, AclOperation.READ);
        // the relay's readers: SASL to the broker, no credentials of their own
        relay =
                TestRelays.start(
                        broker,
                        b ->
                                b.authorization(RelayConfig.Authorization.KAFKA)
                                        .consumerOverrides(
                                                Map.of(
                                                        "security.protocol",
                                                        "SASL_PLAINTEXT",
                                                        "sasl.mechanism",
                                                        "SCRAM-SHA-256")));
    }

    @AfterAll
    static void tearDown() {
        if (relay != null) {
            relay.close();
        }
    }

    private static String topic(String prefix) throws Exception {
        String t = KafkaBroker.unique(prefix);
        broker.createTopic(t, 1);
        long ts = System.currentTimeMillis() - 120_000; // a closed window
        List<ProducerRecord<String, String>> rs = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            rs.add(new ProducerRecord<>(t, 0, ts, "k" + i, "v" + i));
        }
        try (KafkaProducer<String, String> p = broker.stringProducer()) {
            KafkaBroker.sendAll(p, rs);
        }
        return t;
    }

    /** Alice's approximate consumer: her SCRAM login, or {@code jaas} instead when given. */
    private static Consumer<String, String> alice(String delegation, String jaas) {
        Properties p = broker.stringConsumerProps(group);
        p.putAll(broker.clientSecurity(ALICE, ALICE_PASSWORD));
        if (jaas != null) {
            p.put("sasl.jaas.config", jaas);
        }
        p.put("approx.enable", "true");
        p.put("approx.emax", "0.001"); // every record returned
        p.put("approx.window.grace.ms", "0");
        p.put("approx.relay.pull.wait.ms", "1000");
        p.put("approx.auth.secret", TestRelays.SECRET);
        p.put("approx.relay.delegation", delegation);
        for (int id : broker.brokerIds()) {
            p.put("approx.relay.address." + id, relay.address());
        }
        return ApproxConsumers.create(p);
    }

    /** Records returned and exact counts covered until the partition's position reached the end. */
    private static long[] readAll(Consumer<String, String> c, TopicPartition tp) {
        c.assign(List.of(tp));
        long records = 0;
        long counted = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIVENESS_S);
        while (c.position(tp) < RECORDS && System.nanoTime() < deadline) {
            ConsumerRecords<String, String> got = c.poll(Duration.ofMillis(100));
            records += got.count();
            for (ApproxConsumerRecords.CoveredRange r : ApproxConsumerRecords.rangesOf(got)) {
                counted += r.cells().stream().mapToLong(Cell::count).sum();
            }
        }
        return new long[] {records, counted};
    }

    /** Polls the partition until a poll throws; fails if a record of it comes first. */
    private static KafkaException refusal(Consumer<String, String> c, TopicPartition tp) {
        c.assign(List.of(tp));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIVENESS_S);
        while (System.nanoTime() < deadline) {
            try {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                    throw new AssertionError("the relay returned " + r + " of " + tp);
                }
            } catch (KafkaException e) {
                return e;
            }
        }
        throw new AssertionError("no RelayException for " + tp + " within " + LIVENESS_S + " s");
    }

    private static List<DelegationToken> tokensOfAlice() throws Exception {
        try (Admin admin = broker.admin()) {
            List<DelegationToken> out = new ArrayList<>();
            for (DelegationToken t :
                    admin.describeDelegationToken().delegationTokens().get(60, TimeUnit.SECONDS)) {
                if (t.tokenInfo().ownerAsString().equals("User:" + ALICE)) {
                    out.add(t);
                }
            }
            return out;
        }
    }

    @Test
    void aConsumerReadsThroughTheRelayOnlyWhatItsOwnPrincipalMayRead() throws Exception {
        long opened = relay.metrics().sessionsOpened();
        long refusedBefore = relay.metrics().notAuthorized();
        int before = tokensOfAlice().size();
        try (Consumer<String, String> c = alice("token", null)) {
            long[] got = readAll(c, new TopicPartition(granted, 0));
            assertEquals(RECORDS, got[0], "every record of the topic Alice may read");
            assertEquals(RECORDS, got[1]);

            // a topic she may not even describe: her consumer's own Kafka client refuses it, as a
            // plain KafkaConsumer would
            KafkaException k = refusal(c, new TopicPartition(denied, 0));
            assertInstanceOf(TopicAuthorizationException.class, k, k.toString());

            // describing is not reading: Kafka gives her consumer the metadata, the relay's
            // reader (her token) is refused the fetch by the broker
            TopicPartition noRead = new TopicPartition(describeOnly, 0);
            RelayException f = assertInstanceOf(RelayException.class, refusal(c, noRead));
            assertEquals(RelayException.Reason.NOT_AUTHORIZED, f.reason(), f.getMessage());
            assertTrue(f.getMessage().contains("may not read"), f.getMessage());
            assertEquals(0, c.position(noRead), "nothing of it covered");

            // the stream is still there and serves what she may read
            // (assigned anew without a commit: read again from the start)
            long[] again = readAll(c, new TopicPartition(granted, 0));
            assertEquals(RECORDS, again[0]);
            assertEquals(RECORDS, again[1]);
            assertEquals(
                    before + 1, tokensOfAlice().size(), "one token for the consumer's streams");
        }
        assertEquals(opened + 1, relay.metrics().sessionsOpened(), "one stream throughout");
        assertEquals(
                refusedBefore + 1, relay.metrics().notAuthorized(), relay.metrics().toString());
        assertEquals(
                before, tokensOfAlice().size(), "the consumer expired its token when it closed");
    }

    /**
     * The attack of issue 29: a client holding the relay's shared secret (and a token of its own
     * principal) pulls a topic its principal has no ACL for. Before the fix the relay read it with
     * its own identity and sent its records; now the broker refuses the relay's reader.
     */
    @Test
    void aHolderOfTheSecretCannotPullATopicItsPrincipalMayNotRead() throws Exception {
        DelegationToken t = aliceToken();
        try (RawRelayClient raw = new RawRelayClient(relay)) {
            DelegatedToken token =
                    new DelegatedToken(t.tokenInfo().tokenId(), t.hmacAsBase64String());
            awaitUsable(token.jaasConfig());
            ApproxPeer peer = raw.connect();
            raw.open(peer, token).get(LIVENESS_S, TimeUnit.SECONDS);
            for (String topic : List.of(denied, describeOnly)) {
                ExecutionException e =
                        assertThrows(
                                ExecutionException.class,
                                () ->
                                        raw.pull(peer, new TopicPartition(topic, 0), 0, 1000)
                                                .get(LIVENESS_S, TimeUnit.SECONDS));
                RelayException re = assertInstanceOf(RelayException.class, e.getCause());
                assertEquals(RelayException.Reason.NOT_AUTHORIZED, re.reason(), re.getMessage());
            }
            // the same stream serves what she may read
            RelayProtocol.SegmentHeader h =
                    raw.pull(peer, new TopicPartition(granted, 0), 0, 1000)
                            .get(LIVENESS_S, TimeUnit.SECONDS);
            assertEquals(0, h.from());
            assertTrue(h.to() > 0, "granted is read");
        } finally {
            expire(t);
        }
    }

    private static Map<String, Object> aliceAdmin() {
        Map<String, Object> admin = new HashMap<>(broker.clientSecurity(ALICE, ALICE_PASSWORD));
        admin.put("bootstrap.servers", broker.bootstrapServers());
        return admin;
    }

    private static DelegationToken aliceToken() throws Exception {
        try (Admin a = Admin.create(aliceAdmin())) {
            return a.createDelegationToken(new CreateDelegationTokenOptions())
                    .delegationToken()
                    .get(60, TimeUnit.SECONDS);
        }
    }

    private static void expire(DelegationToken t) throws Exception {
        try (Admin a = Admin.create(aliceAdmin())) {
            a.expireDelegationToken(
                            t.hmac(),
                            new org.apache.kafka.clients.admin.ExpireDelegationTokenOptions()
                                    .expiryTimePeriodMs(-1))
                    .expiryTimestamp()
                    .get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void aConsumerThatLogsInWithATokenHandsThatTokenOn() throws Exception {
        DelegationToken t = aliceToken();
        try {
            String jaas =
                    new DelegatedToken(t.tokenInfo().tokenId(), t.hmacAsBase64String())
                            .jaasConfig();
            awaitUsable(jaas);
            int before = tokensOfAlice().size();
            try (Consumer<String, String> c = alice("token", jaas)) {
                long[] got = readAll(c, new TopicPartition(granted, 0));
                assertEquals(RECORDS, got[0]);
                assertEquals(before, tokensOfAlice().size(), "the login token was passed on");
            }
            assertEquals(before, tokensOfAlice().size(), "and not expired: it is not the relay's");
        } finally {
            expire(t);
        }
    }

    /** A token reaches the broker's token cache asynchronously: waits until it logs in. */
    private static void awaitUsable(String jaas) throws Exception {
        Map<String, Object> p = new HashMap<>(broker.clientSecurity(ALICE, ALICE_PASSWORD));
        p.put("sasl.jaas.config", jaas);
        p.put("bootstrap.servers", broker.bootstrapServers());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIVENESS_S);
        try (Admin a = Admin.create(p)) {
            while (true) {
                try {
                    a.describeCluster().clusterId().get(60, TimeUnit.SECONDS);
                    return;
                } catch (ExecutionException e) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(250);
                }
            }
        }
    }

    @Test
    void aConsumerThatDelegatesNoIdentityIsRefused() throws Exception {
        long opened = relay.metrics().sessionsOpened();
        try (Consumer<String, String> c = alice("none", null)) {
            RelayException e =
                    assertInstanceOf(
                            RelayException.class, refusal(c, new TopicPartition(granted, 0)));
            assertEquals(RelayException.Reason.NOT_AUTHORIZED, e.reason(), e.getMessage());
            assertTrue(e.getMessage().contains("approx.relay.delegation=token"), e.getMessage());
        }
        assertEquals(opened, relay.metrics().sessionsOpened(), "no stream opened");
    }

    @Test
    void aTokenTheBrokerDoesNotKnowOpensNoStream() throws Exception {
        long opened = relay.metrics().sessionsOpened();
        try (RawRelayClient raw = new RawRelayClient(relay)) {
            ApproxPeer peer = raw.connect();
            ExecutionException e =
                    assertThrows(
                            ExecutionException.class,
                            () ->
                                    raw.open(peer, new DelegatedToken("forged-token", "AAAAAAAA"))
                                            .get(LIVENESS_S, TimeUnit.SECONDS));
            RelayException re = assertInstanceOf(RelayException.class, e.getCause());
            assertEquals(RelayException.Reason.NOT_AUTHORIZED, re.reason(), re.getMessage());
            assertTrue(re.getMessage().contains("refused the delegated token"), re.getMessage());
            // no stream: a pull on the connection finds none
            ExecutionException p =
                    assertThrows(
                            ExecutionException.class,
                            () ->
                                    raw.pull(peer, new TopicPartition(granted, 0), 0, 100)
                                            .get(LIVENESS_S, TimeUnit.SECONDS));
            assertEquals(
                    RelayException.Reason.UNAVAILABLE,
                    assertInstanceOf(RelayException.class, p.getCause()).reason());
        }
        assertEquals(opened, relay.metrics().sessionsOpened());
    }
}

package io.netapprox.kafka.testkit;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.JaasUtils;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real KRaft cluster in this JVM (Apache Kafka's own test kit), shared by all test classes of the
 * module: started on first use, closed at JVM exit. Every test creates its own topics and groups.
 *
 * <p>The pitfalls this handles: storage is formatted before startup (KRaft, no ZooKeeper); Kafka's
 * {@code Exit} is redirected so a broker fault cannot end the test JVM; ports are random; internal
 * topics have replication factor 1 and consumer groups rebalance without the initial delay;
 * time-based retention is off (test records carry old timestamps); a start that times out on a
 * loaded machine is retried once.
 */
public final class KafkaBroker {
    private static KafkaBroker shared;
    private static KafkaBroker secured;
    private static final AtomicInteger names = new AtomicInteger();

    /** The super user of {@link #secured()} (the test kit's PLAIN admin). */
    public static final String ADMIN = JaasUtils.KAFKA_PLAIN_ADMIN;

    private final KafkaClusterTestKit cluster;
    private final boolean isSecured;

    private KafkaBroker(int brokers) throws Exception {
        this(brokers, false);
    }

    private KafkaBroker(int brokers, boolean isSecured) throws Exception {
        this.isSecured = isSecured;
        redirectExit();
        KafkaClusterTestKit started = null;
        Exception last = null;
        for (int attempt = 0; attempt < 2 && started == null; attempt++) {
            KafkaClusterTestKit kit = null;
            try {
                kit = build(brokers, isSecured);
                kit.format();
                kit.startup();
                kit.waitForReadyBrokers();
                started = kit;
            } catch (Exception e) {
                last = e;
                if (kit != null) {
                    try {
                        kit.close();
                    } catch (Exception ignored) {
                        // the retry starts from a fresh directory
                    }
                }
            }
        }
        if (started == null) {
            throw last;
        }
        cluster = started;
    }

    /**
     * Kafka's {@code Exit} (exit/halt of a broker fault) throws instead of ending the test JVM. The
     * class is internal and moved in 4.4 ({@code common.utils} to {@code common.utils.internals}),
     * so it is found by name: the compat modules run this kit on other releases.
     */
    private static void redirectExit() throws ReflectiveOperationException {
        Class<?> exit = null;
        for (String name :
                new String[] {
                    "org.apache.kafka.common.utils.internals.Exit",
                    "org.apache.kafka.common.utils.Exit"
                }) {
            try {
                exit = Class.forName(name);
                break;
            } catch (ClassNotFoundException e) {
                // try the next release's name
            }
        }
        if (exit == null) {
            throw new ClassNotFoundException("Kafka's Exit class, under neither of its names");
        }
        Class<?> procedure = Class.forName(exit.getName() + "$Procedure");
        for (String kind : new String[] {"exit", "halt"}) {
            Object refuse =
                    Proxy.newProxyInstance(
                            procedure.getClassLoader(),
                            new Class<?>[] {procedure},
                            (proxy, method, args) -> {
                                if (method.getDeclaringClass() == Object.class) {
                                    return method.invoke(kind, args);
                                }
                                throw new IllegalStateException(
                                        "Kafka asked to "
                                                + kind
                                                + "("
                                                + args[0]
                                                + "): "
                                                + (args.length > 1 ? args[1] : ""));
                            });
            String setter =
                    "set" + Character.toUpperCase(kind.charAt(0)) + kind.substring(1) + "Procedure";
            exit.getMethod(setter, procedure).invoke(null, refuse);
        }
    }

    private static KafkaClusterTestKit build(int brokers, boolean isSecured) throws Exception {
        int replication = Math.min(brokers, 3);
        TestKitNodes.Builder nodes =
                new TestKitNodes.Builder()
                        .setCombined(true)
                        .setNumBrokerNodes(brokers)
                        .setNumControllerNodes(1);
        if (isSecured) {
            nodes.setBrokerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT);
        }
        KafkaClusterTestKit.Builder b = new KafkaClusterTestKit.Builder(nodes.build());
        if (isSecured) {
            // the test kit then configures StandardAuthorizer (no ACL: deny), the PLAIN super user
            // ADMIN; SCRAM for the test's users and for delegation tokens (which need a secret);
            // topic auto-creation as Kafka's default has it (on), so a relay that would create
            // topics shows it
            b.setConfigProp("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256")
                    .setConfigProp("delegation.token.secret.key", "netapprox-test-token-key-0123")
                    .setConfigProp("auto.create.topics.enable", "true")
                    // the controller listener stays PLAINTEXT: the broker registers over it as
                    // ANONYMOUS, which must be allowed CLUSTER_ACTION (no client uses that port)
                    .setConfigProp("super.users", "User:" + ADMIN + ";User:ANONYMOUS");
        } else {
            b.setConfigProp("auto.create.topics.enable", "false");
        }
        return b.setConfigProp("group.initial.rebalance.delay.ms", "0")
                .setConfigProp("offsets.topic.replication.factor", String.valueOf(replication))
                .setConfigProp("offsets.topic.num.partitions", "4")
                .setConfigProp(
                        "transaction.state.log.replication.factor", String.valueOf(replication))
                .setConfigProp("transaction.state.log.min.isr", "1")
                .setConfigProp("transaction.state.log.num.partitions", "4")
                // the tests' records carry timestamps years in the past (windows that are closed):
                // time-based retention must never delete them; the check runs every second so a
                // regression shows at once (KafkaBrokerTest)
                .setConfigProp("log.retention.ms", "-1")
                .setConfigProp("log.retention.check.interval.ms", "1000")
                .setConfigProp("log.initial.task.delay.ms", "0")
                .setConfigProp("log.flush.interval.messages", "1000000")
                .setConfigProp("num.network.threads", "2")
                .setConfigProp("num.io.threads", "2")
                .setConfigProp("group.consumer.heartbeat.interval.ms", "500")
                .setConfigProp("group.consumer.min.heartbeat.interval.ms", "500")
                .build();
    }

    /** The broker shared by every test of this JVM. */
    public static synchronized KafkaBroker shared() throws Exception {
        if (shared == null) {
            shared = new KafkaBroker(1);
            KafkaBroker b = shared;
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(b::closeQuietly, "kafka-test-broker-close"));
        }
        return shared;
    }

    /**
     * A second shared single-node cluster whose listener is SASL_PLAINTEXT (PLAIN for {@link
     * #ADMIN}, SCRAM-SHA-256 for users made with {@link #addScramUser} and for delegation tokens),
     * with Kafka's {@code StandardAuthorizer} (no ACL: denied) and, unlike {@link #shared()}, topic
     * auto-creation on (Kafka's default). The helpers of this class (admin, producers, topics) act
     * as {@link #ADMIN} on it.
     */
    public static synchronized KafkaBroker secured() throws Exception {
        if (secured == null) {
            secured = new KafkaBroker(1, true);
            KafkaBroker b = secured;
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(b::closeQuietly, "kafka-test-secured-close"));
        }
        return secured;
    }

    /**
     * Client properties that authenticate as {@code user} on {@link #secured()}: PLAIN for {@link
     * #ADMIN}, SCRAM-SHA-256 for the others; none on a cluster without SASL.
     */
    public Map<String, Object> clientSecurity(String user, String password) {
        if (!isSecured) {
            return Map.of();
        }
        boolean plain = user.equals(ADMIN);
        String module =
                plain
                        ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                        : "org.apache.kafka.common.security.scram.ScramLoginModule";
        return Map.of(
                "security.protocol",
                "SASL_PLAINTEXT",
                "sasl.mechanism",
                plain ? "PLAIN" : "SCRAM-SHA-256",
                "sasl.jaas.config",
                module + " required username=\"" + user + "\" password=\"" + password + "\";");
    }

    /** {@link #clientSecurity} of the super user. */
    public Map<String, Object> adminSecurity() {
        return clientSecurity(ADMIN, JaasUtils.KAFKA_PLAIN_ADMIN_PASSWORD);
    }

    /** Creates (or resets) a SCRAM-SHA-256 user of {@link #secured()}. */
    public void addScramUser(String user, String password) throws Exception {
        try (Admin admin = admin()) {
            admin.alterUserScramCredentials(
                            List.of(
                                    new UserScramCredentialUpsertion(
                                            user,
                                            new ScramCredentialInfo(
                                                    ScramMechanism.SCRAM_SHA_256, 4096),
                                            password)))
                    .all()
                    .get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Allows {@code User:user} the operation on the literal resource (an ACL, as {@link #ADMIN}).
     */
    public void allow(String user, ResourceType type, String name, AclOperation op)
            throws Exception {
        try (Admin admin = admin()) {
            admin.createAcls(
                            List.of(
                                    new AclBinding(
                                            new ResourcePattern(type, name, PatternType.LITERAL),
                                            new AccessControlEntry(
                                                    "User:" + user,
                                                    "*",
                                                    op,
                                                    AclPermissionType.ALLOW))))
                    .all()
                    .get(60, TimeUnit.SECONDS);
        }
    }

    /** A separate cluster with {@code brokers} combined nodes (leader-change tests); close it. */
    public static KafkaBroker cluster(int brokers) throws Exception {
        return new KafkaBroker(brokers);
    }

    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    public KafkaClusterTestKit kit() {
        return cluster;
    }

    /** A fresh name with the given prefix (topics and groups are never shared between tests). */
    public static String unique(String prefix) {
        return prefix
                + "-"
                + names.incrementAndGet()
                + "-"
                + Long.toHexString(System.nanoTime() & 0xffffff);
    }

    public Admin admin() {
        Map<String, Object> p = new HashMap<>(adminSecurity());
        p.put("bootstrap.servers", bootstrapServers());
        return Admin.create(p);
    }

    public void createTopic(String name, int partitions)
            throws ExecutionException, InterruptedException {
        createTopic(name, partitions, (short) 1);
    }

    public void createTopic(String name, int partitions, short replication)
            throws ExecutionException, InterruptedException {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, replication)))
                    .all()
                    .get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("topic " + name + " not created in 60 s", e);
        }
    }

    public KafkaProducer<String, String> stringProducer() {
        Properties p = producerProps();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    public KafkaProducer<byte[], byte[]> bytesProducer(Properties extra) {
        Properties p = producerProps();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    /**
     * Sends the records and waits for every acknowledgement, so a failed send fails the test here,
     * naming it, instead of as missing records later.
     */
    public static <K, V> void sendAll(KafkaProducer<K, V> p, List<ProducerRecord<K, V>> records)
            throws Exception {
        List<Future<?>> acks = new ArrayList<>();
        for (ProducerRecord<K, V> r : records) {
            acks.add(p.send(r));
        }
        p.flush();
        for (Future<?> a : acks) {
            a.get(300, TimeUnit.SECONDS); // the delivery timeout bounds it already
        }
    }

    /**
     * Every test producer's settings. A loaded CI machine: long timeouts and one request in flight,
     * so a slow broker means waiting, never a batch expired and re-sent out of sequence (with the
     * defaults a string producer retried a first batch and the broker refused it for good with
     * OutOfOrderSequenceException "0 (incoming seq. number), 99 (current end sequence number)" -
     * load 14, 2 cores - and its records never arrived).
     */
    private Properties producerProps() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "120000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "300000");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        p.putAll(adminSecurity());
        return p;
    }

    /** Consumer properties for a string consumer in {@code group} (earliest, no auto commit). */
    public Properties stringConsumerProps(String group) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return p;
    }

    public Properties bytesConsumerProps(String group) {
        Properties p = stringConsumerProps(group);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        return p;
    }

    public List<Integer> brokerIds() {
        return new ArrayList<>(cluster.brokers().keySet());
    }

    private void closeQuietly() {
        try {
            cluster.close();
        } catch (Exception ignored) {
            // JVM exit
        }
    }

    public void close() throws Exception {
        cluster.close();
    }
}

package io.netapprox.kafka.relay;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The relay beside a broker: serves approximate consumers the partitions its broker leads, read
 * over loopback and sampled per window and stratum. Embeddable ({@link #start}); each consumer
 * stream is a {@link RelaySession}.
 *
 * <p>Consumers in the same JVM find a started relay by its {@code listen} address ({@link
 * #local(String)}).
 */
public final class KafkaRelay implements AutoCloseable {
    private static final ConcurrentHashMap<String, KafkaRelay> LOCAL = new ConcurrentHashMap<>();
    private static final AtomicInteger ids = new AtomicInteger();

    private final RelayConfig config;
    private final List<RelaySession> sessions = new ArrayList<>();
    private volatile boolean closed;

    private KafkaRelay(RelayConfig config) {
        this.config = config;
    }

    public static KafkaRelay start(RelayConfig config) {
        KafkaRelay r = new KafkaRelay(config);
        if (LOCAL.putIfAbsent(config.listen(), r) != null) {
            throw new IllegalStateException("a relay already listens at " + config.listen());
        }
        return r;
    }

    /** The relay started in this JVM at {@code address}, or null. */
    public static KafkaRelay local(String address) {
        return LOCAL.get(address);
    }

    public RelayConfig config() {
        return config;
    }

    /** Opens a consumer's stream. */
    public RelaySession openSession(StreamSpec spec) {
        synchronized (sessions) {
            if (closed) {
                throw new RelayException(RelayException.Reason.UNAVAILABLE, "relay closed");
            }
            if (sessions.size() >= config.maxSessions()) {
                throw new RelayException(
                        RelayException.Reason.UNAVAILABLE,
                        "relay at "
                                + config.listen()
                                + " serves "
                                + config.maxSessions()
                                + " streams already");
            }
            RelaySession s =
                    new RelaySession(this, spec, "netapprox-relay-" + ids.incrementAndGet());
            sessions.add(s);
            return s;
        }
    }

    void sessionClosed(RelaySession s) {
        synchronized (sessions) {
            sessions.remove(s);
        }
    }

    public int sessionCount() {
        synchronized (sessions) {
            return sessions.size();
        }
    }

    @Override
    public void close() {
        List<RelaySession> open;
        synchronized (sessions) {
            if (closed) {
                return;
            }
            closed = true;
            open = new ArrayList<>(sessions);
        }
        LOCAL.remove(config.listen(), this);
        open.forEach(RelaySession::close);
    }
}

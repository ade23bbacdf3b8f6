package io.netapprox.kafka.relay;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.kafka.testkit.TestRelays;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;

/**
 * A client of a relay that speaks {@link RelayProtocol} directly, as any holder of the shared
 * secret can: any wait, any topic name, any number of connections. Its own transport (one ATP
 * endpoint), so the relay can tell its connections from a consumer's by their data port.
 */
final class RawRelayClient implements AutoCloseable {
    static final StreamSpec SPEC =
            new StreamSpec(
                    0.001,
                    Map.of(),
                    0.95,
                    1.5,
                    1.0,
                    60_000,
                    0,
                    new Stratification(Stratification.Kind.PARTITION, null),
                    false,
                    1,
                    ValueSource.DEFAULT);

    private final ApproxTransport transport;
    private final InetSocketAddress relay;
    private final List<ApproxPeer> peers = new ArrayList<>();
    private final AtomicLong seq = new AtomicLong();

    RawRelayClient(KafkaRelay relay) {
        this.transport =
                ApproxTransport.start(
                        ApproxTransportConfig.builder()
                                .atp(
                                        ApproxTransportConfig.defaultAtp()
                                                .bindAddress("127.0.0.1")
                                                .bindPort(0)
                                                .build())
                                .control(
                                        ControlConfig.builder()
                                                .authSecret(
                                                        TestRelays.SECRET.getBytes(
                                                                StandardCharsets.UTF_8))
                                                .requestTimeout(Duration.ofMinutes(15))
                                                .build())
                                .serverEnabled(false)
                                .build());
        String[] hp = relay.address().split(":");
        this.relay = new InetSocketAddress(hp[0], Integer.parseInt(hp[1]));
    }

    /** The UDP port of this client's ATP endpoint (what the relay sees as its data address). */
    int dataPort() {
        return transport.dataPort();
    }

    /** A new connection to the relay. */
    ApproxPeer connect() throws Exception {
        ApproxPeer p = transport.connect(relay).get(60, TimeUnit.SECONDS);
        peers.add(p);
        return p;
    }

    /** OPEN's answer (throws the relay's refusal as a RelayException). */
    CompletableFuture<Void> open(ApproxPeer peer, DelegatedToken token) {
        return send(peer, new RelayProtocol.Open(SPEC, token)).thenAccept(RelayProtocol::checkOk);
    }

    /** A PULL's answer: the segment header, or the relay's failure thrown. */
    CompletableFuture<RelayProtocol.SegmentHeader> pull(
            ApproxPeer peer, TopicPartition tp, long from, int maxWaitMs) {
        return pull(peer, tp, from, maxWaitMs, seq.incrementAndGet());
    }

    CompletableFuture<RelayProtocol.SegmentHeader> pull(
            ApproxPeer peer, TopicPartition tp, long from, int maxWaitMs, long seqNo) {
        return send(peer, new RelayProtocol.Pull(tp, from, maxWaitMs, seqNo))
                .thenApply(RelayProtocol::decodeHeader);
    }

    CompletableFuture<Void> release(ApproxPeer peer, List<TopicPartition> tps, long seqNo) {
        return send(peer, new RelayProtocol.Release(tps, seqNo)).thenAccept(RelayProtocol::checkOk);
    }

    long nextSeq() {
        return seq.incrementAndGet();
    }

    /** The DATA_RESPONSE; records of a segment's job are released unseen. */
    private CompletableFuture<byte[]> send(ApproxPeer peer, RelayProtocol.Request r) {
        return peer.request(RelayProtocol.encode(r), (t, m) -> m.release()).response();
    }

    @Override
    public void close() {
        peers.forEach(ApproxPeer::close);
        transport.close();
    }
}

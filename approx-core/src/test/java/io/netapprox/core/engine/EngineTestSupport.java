package io.netapprox.core.engine;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/** Helpers shared by the engine tests: loopback endpoint pairs and process resource probes. */
final class EngineTestSupport {
    private EngineTestSupport() {}

    static AtpConfig.Builder loopback() {
        return AtpConfig.builder().bindAddress("127.0.0.1").lineRateBps(40_000_000_000L);
    }

    /** A sender/receiver pair of endpoints with one session between them. */
    static final class Pair implements AutoCloseable {
        final AtpEndpoint sender;
        final AtpEndpoint receiver;
        final AtpSession out;
        final AtpSession in;

        Pair(AtpConfig senderCfg, AtpConfig receiverCfg, IncomingJobListener listener) {
            AtpEndpoint s = AtpEndpoint.open(senderCfg);
            AtpEndpoint r;
            try {
                r = AtpEndpoint.open(receiverCfg);
            } catch (RuntimeException e) {
                s.close();
                throw e;
            }
            sender = s;
            receiver = r;
            long sid = ThreadLocalRandom.current().nextLong();
            byte[] key = new byte[32];
            ThreadLocalRandom.current().nextBytes(key);
            out = s.openSession(sid, key, new InetSocketAddress("127.0.0.1", r.localPort()), true);
            in =
                    r.openSession(
                            sid,
                            key,
                            new InetSocketAddress("127.0.0.1", s.localPort()),
                            false,
                            listener);
        }

        @Override
        public void close() {
            sender.close();
            receiver.close();
        }
    }

    static long openFds() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** VmRSS in KiB. */
    static long rssKib() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/self/status"));
            for (String l : lines) {
                if (l.startsWith("VmRSS:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("no VmRSS");
    }

    static long threads() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/task"))) {
            return s.count();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}

package io.netapprox.core.transport;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Records what the logger writes (slf4j-simple writes to {@code System.err}, looked up per line)
 * while still printing it: for tests that count WARN lines.
 */
final class LogCapture implements AutoCloseable {
    private final PrintStream original = System.err;
    private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

    LogCapture() {
        OutputStream tee =
                new OutputStream() {
                    @Override
                    public void write(int b) {
                        synchronized (copy) {
                            copy.write(b);
                        }
                        original.write(b);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) {
                        synchronized (copy) {
                            copy.write(b, off, len);
                        }
                        original.write(b, off, len);
                    }
                };
        System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
    }

    /** The WARN lines so far that contain every one of {@code parts}. */
    List<String> warnings(String... parts) {
        String all;
        synchronized (copy) {
            all = copy.toString(StandardCharsets.UTF_8);
        }
        List<String> out = new ArrayList<>();
        for (String line : all.split("\n")) {
            if (!line.contains(" WARN ")) {
                continue;
            }
            boolean match = true;
            for (String p : parts) {
                match &= line.contains(p);
            }
            if (match) {
                out.add(line);
            }
        }
        return out;
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}

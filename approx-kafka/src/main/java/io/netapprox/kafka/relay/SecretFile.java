package io.netapprox.kafka.relay;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reads a shared secret from a file: its bytes, without one trailing line break (as {@code echo}
 * writes it). At most 4 KiB; an empty file is an error.
 */
public final class SecretFile {
    private static final long MAX_BYTES = 4096;

    private SecretFile() {}

    public static byte[] read(Path file) throws IOException {
        long size = Files.size(file);
        if (size > MAX_BYTES) {
            throw new IllegalArgumentException(
                    "secret file "
                            + file
                            + " holds "
                            + size
                            + " bytes (at most "
                            + MAX_BYTES
                            + ")");
        }
        byte[] b = Files.readAllBytes(file);
        int n = b.length;
        if (n > 0 && b[n - 1] == '\n') {
            n--;
            if (n > 0 && b[n - 1] == '\r') {
                n--;
            }
        }
        if (n == 0) {
            throw new IllegalArgumentException("secret file " + file + " is empty");
        }
        byte[] s = Arrays.copyOf(b, n);
        Arrays.fill(b, (byte) 0);
        return s;
    }
}

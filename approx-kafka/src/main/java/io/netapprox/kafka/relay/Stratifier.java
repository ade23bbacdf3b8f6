package io.netapprox.kafka.relay;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Names the stratum of a record: the partition number, or the key or header value decoded as UTF-8
 * ({@code 0x<hex>} when the bytes are not valid UTF-8, so distinct byte strings never share a name;
 * {@code sha256:<hex>} when longer than {@link #MAX_NAME_BYTES}). A missing key or header is the
 * stratum {@link #NONE}.
 */
public final class Stratifier {
    /** Stratum of records with a null key, or without the header. */
    public static final String NONE = "<none>";

    /**
     * Longer keys or header values are named by their SHA-256 ({@code sha256:<hex>}): a name
     * travels in every segment header.
     */
    public static final int MAX_NAME_BYTES = 1024;

    private final Stratification stratification;

    public Stratifier(Stratification stratification) {
        this.stratification = stratification;
    }

    /** The stratum of a record whose key is {@code byte[]} or a {@link ByteBuffer} view. */
    public String stratumOf(ConsumerRecord<?, ?> record) {
        switch (stratification.kind()) {
            case PARTITION:
                return Integer.toString(record.partition());
            case KEY:
                return name(keyBytes(record.key()));
            case HEADER:
                Header h = record.headers().lastHeader(stratification.header());
                return h == null ? NONE : name(h.value());
            default:
                throw new IllegalStateException();
        }
    }

    private static byte[] keyBytes(Object key) {
        if (key instanceof ByteBuffer view) {
            byte[] b = new byte[view.remaining()];
            view.duplicate().get(b);
            return b;
        }
        return (byte[]) key;
    }

    static String name(byte[] bytes) {
        if (bytes == null) {
            return NONE;
        }
        if (bytes.length > MAX_NAME_BYTES) {
            return longName(bytes);
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            return "0x" + HexFormat.of().formatHex(bytes);
        }
    }

    private static String longName(byte[] bytes) {
        try {
            return "sha256:"
                    + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}

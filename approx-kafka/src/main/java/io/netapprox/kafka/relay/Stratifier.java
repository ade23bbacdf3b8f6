package io.netapprox.kafka.relay;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Names the stratum of a record: the partition number, or the key or header value decoded as UTF-8
 * ({@code 0x<hex>} when the bytes are not valid UTF-8, so distinct byte strings never share a name;
 * {@code sha256:<hex>} when longer than {@link #MAX_NAME_BYTES}). A missing key or header is the
 * stratum {@link #NONE}.
 *
 * <p>Names are cached by the bytes they name (at most {@link #MAX_CACHED_NAMES}, then the cache
 * starts over): streams have few strata, and copying and decoding a key per record cost the relay
 * more than sampling it. Not thread-safe: one per reading thread.
 */
public final class Stratifier {
    /** Stratum of records with a null key, or without the header. */
    public static final String NONE = "<none>";

    /**
     * Longer keys or header values are named by their SHA-256 ({@code sha256:<hex>}): a name
     * travels in every segment header.
     */
    public static final int MAX_NAME_BYTES = 1024;

    static final int MAX_CACHED_NAMES = 4096;

    private final Stratification stratification;
    private final Map<ByteBuffer, String> names = new HashMap<>();

    public Stratifier(Stratification stratification) {
        this.stratification = stratification;
    }

    /** The stratum of a record whose key is {@code byte[]} or a {@link ByteBuffer} view. */
    public String stratumOf(ConsumerRecord<?, ?> record) {
        switch (stratification.kind()) {
            case PARTITION:
                return Integer.toString(record.partition());
            case KEY:
                return cachedName(keyView(record.key()));
            case HEADER:
                Header h = record.headers().lastHeader(stratification.header());
                return h == null || h.value() == null
                        ? NONE
                        : cachedName(ByteBuffer.wrap(h.value()));
            default:
                throw new IllegalStateException();
        }
    }

    private static ByteBuffer keyView(Object key) {
        if (key == null) {
            return null;
        }
        return key instanceof ByteBuffer view ? view : ByteBuffer.wrap((byte[]) key);
    }

    /** {@link #name} of the view's remaining bytes, from the cache when named before. */
    private String cachedName(ByteBuffer view) {
        if (view == null) {
            return NONE;
        }
        if (view.remaining() > MAX_NAME_BYTES) {
            return name(copy(view)); // hashing it for the cache would cost as much
        }
        String n = names.get(view); // content equality; does not move the view
        if (n == null) {
            byte[] b = copy(view);
            n = name(b);
            if (names.size() >= MAX_CACHED_NAMES) {
                names.clear();
            }
            names.put(ByteBuffer.wrap(b), n);
        }
        return n;
    }

    private static byte[] copy(ByteBuffer view) {
        byte[] b = new byte[view.remaining()];
        view.duplicate().get(b);
        return b;
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

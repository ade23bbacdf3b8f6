package io.netapprox.kafka.relay;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Names the stratum of a record: the partition number, or the key or header value decoded as UTF-8
 * ({@code 0x<hex>} when the bytes are not valid UTF-8, so distinct byte strings never share a
 * name). A missing key or header is the stratum {@link #NONE}.
 */
public final class Stratifier {
    /** Stratum of records with a null key, or without the header. */
    public static final String NONE = "<none>";

    private final Stratification stratification;

    public Stratifier(Stratification stratification) {
        this.stratification = stratification;
    }

    public String stratumOf(ConsumerRecord<byte[], byte[]> record) {
        switch (stratification.kind()) {
            case PARTITION:
                return Integer.toString(record.partition());
            case KEY:
                return name(record.key());
            case HEADER:
                Header h = record.headers().lastHeader(stratification.header());
                return h == null ? NONE : name(h.value());
            default:
                throw new IllegalStateException();
        }
    }

    static String name(byte[] bytes) {
        if (bytes == null) {
            return NONE;
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
}

package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The key length {@link StratumSample#exactBytes} counts is the one the map side writes. */
class StratumBytesTest {
    @Test
    void keyLengthIsWhatWriteUtfWrites() throws IOException {
        for (String k : new String[] {"", "zone-17", "caf\u00e9", "\u0000", "\u20ac\ud834\udd1e"}) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            new DataOutputStream(b).writeUTF(k);
            assertEquals(b.size(), StratumSample.encodedLength(k), k);
        }
        assertEquals(2, StratumSample.encodedLength(null)); // written as ""
    }
}

package io.netapprox.kafka.relay;

import java.util.regex.Pattern;

/**
 * A Kafka delegation token a consumer hands its relay streams, so the relay reads the consumer's
 * partitions as the consumer's own Kafka principal (the token's owner) and the broker's authorizer
 * decides every fetch (docs/security.md section 6). {@code hmac} is the token's password as Kafka's
 * SCRAM login takes it (Base64). Both strings are restricted to Base64 characters: they end up in a
 * JAAS configuration on the relay, so a quote or a semicolon must never get there. {@link
 * #toString()} never shows the HMAC.
 */
public record DelegatedToken(String tokenId, String hmac) {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9+/=_-]{1,256}");
    private static final Pattern HMAC = Pattern.compile("[A-Za-z0-9+/=_-]{1,1024}");

    public DelegatedToken {
        if (tokenId == null || !ID.matcher(tokenId).matches()) {
            throw new IllegalArgumentException(
                    "delegation token id must be 1 to 256 Base64 characters");
        }
        if (hmac == null || !HMAC.matcher(hmac).matches()) {
            throw new IllegalArgumentException(
                    "delegation token HMAC must be 1 to 1024 Base64 characters");
        }
    }

    /** The SCRAM login of this token ({@code sasl.jaas.config}, {@code tokenauth=true}). */
    String jaasConfig() {
        return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                + tokenId
                + "\" password=\""
                + hmac
                + "\" tokenauth=\"true\";";
    }

    @Override
    public String toString() {
        return "DelegatedToken{" + tokenId + "}";
    }
}

package io.netapprox.core.control;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The control protocol's key schedule (version 2): the data-plane session key is derived on both
 * ends and never travels. Both HELLOs carry a fresh 32-byte nonce and an ephemeral X25519 share;
 * with {@code H}, {@code A} the HELLO and HELLO_ACK bodies (nonces and shares included):
 *
 * <pre>
 * th   = SHA-256(len(H) || H || len(A) || A)                          transcript hash
 * prk  = HMAC-SHA256(salt = client_nonce || server_nonce,
 *                    ikm  = X25519(own, peer share) || secret)          HKDF-Extract (secret may be empty)
 * client_proof = HKDF-Expand(prk, "netapprox/control/v2 client proof" || th, 32)
 * server_proof = HKDF-Expand(prk, "netapprox/control/v2 server proof" || th, 32)
 * key(id)      = HKDF-Expand(prk, "netapprox/control/v2 data-plane key" || th || id, 32)
 * confirm(id)  = HKDF-Expand(prk, "netapprox/control/v2 session confirm" || th || id, 32)
 * dkey(id)     = HKDF-Expand(prk, "netapprox/control/v2 data connection key" || th || id, 32)   (version 4)
 * </pre>
 *
 * A TCP data connection (version 4) proves that it belongs to session {@code id} with {@code
 * dkey(id)}, which like {@code key(id)} never travels: over both nonces of the attach, {@code proof
 * = HMAC-SHA256(dkey(id), "netapprox/control/v2 data connection <server|client> proof" || id ||
 * client_nonce || server_nonce)} ({@link #dataConnectionProof}).
 *
 * <p>A passive observer lacks the X25519 private keys, so it can compute none of these even if it
 * knows the secret; an active one that substitutes a share changes {@code th} and fails the proofs
 * (when a secret is configured). Fresh nonces and shares on both ends give every session its own
 * key. See docs/security.md section 2.
 */
final class KeySchedule {
    static final int SHARE_LENGTH = 32;
    static final int OUTPUT_LENGTH = 32;

    private static final byte[] CLIENT_PROOF = label("client proof");
    private static final byte[] SERVER_PROOF = label("server proof");
    private static final byte[] DATA_PLANE_KEY = label("data-plane key");
    private static final byte[] SESSION_CONFIRM = label("session confirm");
    private static final byte[] DATA_CONNECTION_KEY = label("data connection key");
    private static final byte[] DATA_CONNECTION_SERVER_PROOF =
            label("data connection server proof");
    private static final byte[] DATA_CONNECTION_CLIENT_PROOF =
            label("data connection client proof");

    /** X.509 SubjectPublicKeyInfo prefix of a raw X25519 public key (RFC 8410). */
    private static final byte[] X25519_SPKI_PREFIX = {
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x03, 0x21, 0x00
    };

    private final byte[] prk;
    private final byte[] transcriptHash;

    private KeySchedule(byte[] prk, byte[] transcriptHash) {
        this.prk = prk;
        this.transcriptHash = transcriptHash;
    }

    private static byte[] label(String what) {
        return ("netapprox/control/v2 " + what).getBytes(StandardCharsets.US_ASCII);
    }

    /** One side's ephemeral X25519 key pair; {@link #share()} is what goes into HELLO/HELLO_ACK. */
    static final class Ephemeral {
        private final PrivateKey privateKey;
        private final byte[] share;

        private Ephemeral(PrivateKey privateKey, byte[] share) {
            this.privateKey = privateKey;
            this.share = share;
        }

        static Ephemeral generate() {
            try {
                KeyPair kp = KeyPairGenerator.getInstance("X25519").generateKeyPair();
                byte[] spki = kp.getPublic().getEncoded();
                byte[] raw = Arrays.copyOfRange(spki, X25519_SPKI_PREFIX.length, spki.length);
                if (raw.length != SHARE_LENGTH) {
                    throw new IllegalStateException("unexpected X25519 encoding");
                }
                return new Ephemeral(kp.getPrivate(), raw);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("X25519 is not available in this JVM", e);
            }
        }

        byte[] share() {
            return share.clone();
        }

        /**
         * X25519 with the peer's share.
         *
         * @throws InvalidKeyException for a share of small order (the result would be all zero
         *     whatever our key: a hostile peer forcing a known secret)
         */
        byte[] agree(byte[] peerShare) throws InvalidKeyException {
            if (peerShare.length != SHARE_LENGTH) {
                throw new InvalidKeyException("X25519 share must be 32 bytes");
            }
            try {
                byte[] spki = new byte[X25519_SPKI_PREFIX.length + SHARE_LENGTH];
                System.arraycopy(X25519_SPKI_PREFIX, 0, spki, 0, X25519_SPKI_PREFIX.length);
                System.arraycopy(peerShare, 0, spki, X25519_SPKI_PREFIX.length, SHARE_LENGTH);
                PublicKey peer =
                        KeyFactory.getInstance("X25519")
                                .generatePublic(new X509EncodedKeySpec(spki));
                KeyAgreement ka = KeyAgreement.getInstance("X25519");
                ka.init(privateKey);
                ka.doPhase(peer, true);
                return ka.generateSecret();
            } catch (InvalidKeyException e) {
                throw e;
            } catch (GeneralSecurityException e) {
                throw new InvalidKeyException("not an X25519 share: " + e.getMessage(), e);
            }
        }
    }

    /**
     * Runs HKDF-Extract over the X25519 result and the secret ({@code null} or empty: none) with
     * both nonces as salt, and hashes the transcript. Wipes {@code dh}.
     */
    static KeySchedule derive(
            byte[] dh,
            byte[] secret,
            byte[] clientNonce,
            byte[] serverNonce,
            byte[] helloBody,
            byte[] helloAckBody) {
        byte[] salt = concat(clientNonce, serverNonce);
        byte[] ikm = concat(dh, secret == null ? new byte[0] : secret);
        try {
            byte[] prk = hmac(salt, ikm);
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            lengthPrefixed(sha, helloBody);
            lengthPrefixed(sha, helloAckBody);
            return new KeySchedule(prk, sha.digest());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        } finally {
            Arrays.fill(dh, (byte) 0);
            Arrays.fill(ikm, (byte) 0);
        }
    }

    byte[] clientProof() {
        return expand(CLIENT_PROOF, null);
    }

    byte[] serverProof() {
        return expand(SERVER_PROOF, null);
    }

    /** The data-plane key of session {@code sessionId} (the caller wipes it after use). */
    byte[] sessionKey(long sessionId) {
        return expand(DATA_PLANE_KEY, sessionId);
    }

    /** What SESSION_SETUP_ACK carries: proof that the server derived the same key for this id. */
    byte[] sessionConfirm(long sessionId) {
        return expand(SESSION_CONFIRM, sessionId);
    }

    /**
     * The key a TCP data connection of session {@code sessionId} authenticates with (the caller
     * wipes it after use). A key of its own, not the ATP key: one key, one use.
     */
    byte[] dataConnectionKey(long sessionId) {
        return expand(DATA_CONNECTION_KEY, sessionId);
    }

    /**
     * What DATA_ATTACH_ACK ({@code server} true) or DATA_ATTACH_PROOF carries: proof of the
     * session's data-connection key over both nonces of this attach, so a recorded attach never
     * verifies again (the server's nonce is fresh) and neither side's proof serves for the other.
     */
    static byte[] dataConnectionProof(
            byte[] dataConnectionKey,
            boolean server,
            long sessionId,
            byte[] clientNonce,
            byte[] serverNonce) {
        byte[] id = new byte[8];
        long v = sessionId;
        for (int i = 7; i >= 0; i--) {
            id[i] = (byte) v;
            v >>>= 8;
        }
        try {
            return hmac(
                    dataConnectionKey,
                    concat(
                            server ? DATA_CONNECTION_SERVER_PROOF : DATA_CONNECTION_CLIENT_PROOF,
                            id,
                            clientNonce,
                            serverNonce));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }

    /** Forgets the pseudo-random key (best effort: the JCE may hold copies). */
    void wipe() {
        Arrays.fill(prk, (byte) 0);
    }

    /** Constant-time comparison. */
    static boolean verify(byte[] expected, byte[] actual) {
        return MessageDigest.isEqual(expected, actual);
    }

    /** HKDF-Expand (RFC 5869) for one block: HMAC(prk, info || 0x01). */
    private byte[] expand(byte[] label, Long sessionId) {
        byte[] id = new byte[sessionId == null ? 0 : 8];
        if (sessionId != null) {
            long v = sessionId;
            for (int i = 7; i >= 0; i--) {
                id[i] = (byte) v;
                v >>>= 8;
            }
        }
        try {
            return hmac(prk, concat(label, transcriptHash, id, new byte[] {1}));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }

    private static byte[] hmac(byte[] key, byte[] data) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(data);
    }

    private static void lengthPrefixed(MessageDigest md, byte[] b) {
        md.update(
                new byte[] {
                    (byte) (b.length >>> 24),
                    (byte) (b.length >>> 16),
                    (byte) (b.length >>> 8),
                    (byte) b.length
                });
        md.update(b);
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}

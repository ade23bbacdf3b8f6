package io.netapprox.kafka.relay;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer's side of a relay's {@code authorization=kafka} ({@code
 * approx.relay.delegation=token}): the Kafka delegation token its relay streams carry, so each
 * relay reads the consumer's partitions as the consumer's own principal.
 *
 * <p>If the consumer itself logs in with a delegation token ({@code tokenauth=true} in its {@code
 * sasl.jaas.config}, as Spark and Flink hand tokens to their workers) that token is passed on: it
 * is not renewed or expired here (its creator does that). Otherwise a token is created on first use
 * with the consumer's own Kafka credentials (the owner is the consumer's principal, its only
 * renewer), renewed at half of its remaining time to expiry, and expired when the consumer closes.
 * A token ends at the broker's {@code delegation.token.max.lifetime.ms} (7 days by default): a
 * consumer running longer needs its relay streams reopened (docs/security.md section 6).
 */
public final class TokenDelegation implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TokenDelegation.class);
    private static final long ADMIN_TIMEOUT_S = 30;

    private final Map<String, Object> adminProps;
    private final Map<String, Object> kafkaProps;
    private DelegatedToken token;
    private DelegationToken created;
    private ScheduledExecutorService renewer;
    private boolean closed;

    /**
     * @param kafkaProps the consumer's Kafka properties (its bootstrap and credentials)
     */
    public TokenDelegation(Map<String, ?> kafkaProps) {
        this.kafkaProps = new HashMap<>(kafkaProps);
        this.adminProps = new HashMap<>();
        kafkaProps.forEach(
                (k, v) -> {
                    if (AdminClientConfig.configNames().contains(k)) {
                        adminProps.put(k, v);
                    }
                });
        adminProps.put(AdminClientConfig.CLIENT_ID_CONFIG, "netapprox-delegation");
    }

    /**
     * The token to hand a relay: the consumer's own login token, or one created now (blocks up to
     * 30 s).
     *
     * @throws RelayException NOT_AUTHORIZED: Kafka would not create a token for these credentials
     */
    public synchronized DelegatedToken token() {
        if (closed) {
            throw new RelayException(RelayException.Reason.UNAVAILABLE, "consumer closed");
        }
        if (token != null) {
            return token;
        }
        DelegatedToken own = loginToken(kafkaProps.get(SaslConfigs.SASL_JAAS_CONFIG));
        if (own != null) {
            token = own;
            return token;
        }
        try (Admin admin = Admin.create(adminProps)) {
            DelegationToken t =
                    admin.createDelegationToken(new CreateDelegationTokenOptions())
                            .delegationToken()
                            .get(ADMIN_TIMEOUT_S, TimeUnit.SECONDS);
            created = t;
            token = new DelegatedToken(t.tokenInfo().tokenId(), t.hmacAsBase64String());
            log.info(
                    "delegation token {} of {} created for the relays (expires {}, at the latest"
                            + " {})",
                    t.tokenInfo().tokenId(),
                    t.tokenInfo().ownerAsString(),
                    t.tokenInfo().expiryTimestamp(),
                    t.tokenInfo().maxTimestamp());
        } catch (ExecutionException e) {
            throw new RelayException(
                    RelayException.Reason.NOT_AUTHORIZED,
                    "could not create a Kafka delegation token with the consumer's credentials"
                            + " (approx.relay.delegation=token): "
                            + e.getCause().getMessage(),
                    -1,
                    e.getCause());
        } catch (TimeoutException e) {
            throw new RelayException(
                    RelayException.Reason.UNAVAILABLE,
                    "Kafka did not create a delegation token within " + ADMIN_TIMEOUT_S + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RelayException(RelayException.Reason.UNAVAILABLE, "interrupted");
        }
        renewer =
                Executors.newSingleThreadScheduledExecutor(
                        r -> {
                            Thread th = new Thread(r, "netapprox-token-renewal");
                            th.setDaemon(true);
                            return th;
                        });
        scheduleRenewal(created.tokenInfo().expiryTimestamp());
        return token;
    }

    /** True when a token was created here (it is renewed and, at close, expired). */
    public synchronized boolean createdToken() {
        return created != null;
    }

    private void scheduleRenewal(long expiry) {
        long max = created.tokenInfo().maxTimestamp();
        if (expiry >= max) {
            log.warn(
                    "delegation token {} cannot be renewed past its max lifetime; it ends at {}",
                    created.tokenInfo().tokenId(),
                    max);
            return;
        }
        long delay = Math.max(1_000, (expiry - System.currentTimeMillis()) / 2);
        renewer.schedule(this::renew, delay, TimeUnit.MILLISECONDS);
    }

    private void renew() {
        DelegationToken t;
        synchronized (this) {
            if (closed) {
                return;
            }
            t = created;
        }
        long expiry;
        try (Admin admin = Admin.create(adminProps)) {
            expiry =
                    admin.renewDelegationToken(t.hmac(), new RenewDelegationTokenOptions())
                            .expiryTimestamp()
                            .get(ADMIN_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn(
                    "renewing delegation token {} failed ({}); trying again in 60 s",
                    t.tokenInfo().tokenId(),
                    e.getMessage());
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
                return;
            }
            renewer.schedule(this::renew, 60, TimeUnit.SECONDS);
            return;
        }
        synchronized (this) {
            if (!closed) {
                scheduleRenewal(expiry);
            }
        }
    }

    /**
     * The delegation token the consumer logs in with ({@code ScramLoginModule ... tokenauth=true}),
     * or null.
     */
    static DelegatedToken loginToken(Object jaas) {
        if (jaas == null) {
            return null;
        }
        String text = jaas instanceof Password p ? p.value() : String.valueOf(jaas);
        List<AppConfigurationEntry> entries;
        try {
            entries =
                    JaasContext.loadClientContext(
                                    Map.of(SaslConfigs.SASL_JAAS_CONFIG, new Password(text)))
                            .configurationEntries();
        } catch (RuntimeException e) {
            return null; // the consumer's own client reports its bad JAAS configuration
        }
        for (AppConfigurationEntry e : entries) {
            Map<String, ?> o = e.getOptions();
            if ("true".equalsIgnoreCase(String.valueOf(o.get("tokenauth")))
                    && o.get("username") != null
                    && o.get("password") != null) {
                return new DelegatedToken(
                        String.valueOf(o.get("username")), String.valueOf(o.get("password")));
            }
        }
        return null;
    }

    /** Stops renewing and expires a token created here (at once), so the relays lose it. */
    @Override
    public void close() {
        DelegationToken t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            t = created;
            if (renewer != null) {
                renewer.shutdownNow();
            }
        }
        if (t == null) {
            return;
        }
        try (Admin admin = Admin.create(adminProps)) {
            admin.expireDelegationToken(
                            t.hmac(), new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1))
                    .expiryTimestamp()
                    .get(ADMIN_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.warn(
                    "expiring delegation token {} failed ({}); it lapses at its expiry",
                    t.tokenInfo().tokenId(),
                    e.getMessage());
        }
    }
}

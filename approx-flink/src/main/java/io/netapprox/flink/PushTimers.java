package io.netapprox.flink;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the pushed-epoch timers of a {@link PushReceiver} (how long a pushed epoch waits for its
 * manifest, a manifest for its push). A seam so tests move time by hand instead of sleeping.
 */
@FunctionalInterface
interface PushTimers {
    /** Runs {@code task} once, {@code delayMillis} from now, on some other thread. */
    void after(long delayMillis, Runnable task);

    /** Wall-clock timers (CompletableFuture's shared delayed executor). */
    PushTimers REAL =
            (delayMillis, task) ->
                    CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS)
                            .execute(task);
}

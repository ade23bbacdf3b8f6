package io.netapprox.core.lab;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** Runs commands for the namespace lab tests: exit code, stdout and stderr, with a time bound. */
public final class Shell {
    private Shell() {}

    /** A finished command; {@code rc} is -1 when it could not start or was killed at the bound. */
    public record Result(int rc, String out, String err) {}

    /** Runs {@code cmd} to its end (killed after {@code seconds}); never throws. */
    public static Result run(List<String> cmd, long seconds) {
        try {
            return finish(new ProcessBuilder(cmd).start(), seconds);
        } catch (IOException e) {
            return new Result(-1, "", String.valueOf(e));
        }
    }

    /** {@code sh -c cmd}, 30 s at most: its exit code. */
    public static int sh(String cmd) {
        return run(List.of("sh", "-c", cmd), 30).rc;
    }

    /** {@code sh -c cmd}, which must succeed: otherwise an exception naming the command. */
    public static void must(String cmd) {
        Result r = run(List.of("sh", "-c", cmd), 30);
        if (r.rc != 0) {
            throw new IllegalStateException(cmd + " exited " + r.rc + ": " + r.err);
        }
    }

    /**
     * Reads {@code p}'s stdout and stderr to the end (both at once, so neither pipe fills) and
     * waits for it, killing it after {@code seconds}.
     */
    public static Result finish(Process p, long seconds) {
        StringBuilder err = new StringBuilder();
        Thread errReader =
                new Thread(
                        () -> {
                            try {
                                err.append(
                                        new String(
                                                p.getErrorStream().readAllBytes(),
                                                StandardCharsets.UTF_8));
                            } catch (IOException e) {
                                err.append(e);
                            }
                        },
                        "shell-stderr");
        errReader.start();
        AtomicBoolean killed = new AtomicBoolean();
        Thread killer =
                new Thread(
                        () -> {
                            try {
                                if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                                    killed.set(true);
                                    p.destroyForcibly();
                                }
                            } catch (InterruptedException e) {
                                killed.set(true);
                                p.destroyForcibly();
                            }
                        },
                        "shell-bound");
        killer.setDaemon(true);
        killer.start();
        try {
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            errReader.join(10_000);
            return new Result(killed.get() ? -1 : p.exitValue(), out, err.toString());
        } catch (IOException | InterruptedException e) {
            p.destroyForcibly();
            return new Result(-1, "", err + String.valueOf(e));
        }
    }
}

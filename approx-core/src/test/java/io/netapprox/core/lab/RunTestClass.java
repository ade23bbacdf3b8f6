package io.netapprox.core.lab;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs one JUnit test class in this JVM and prints a summary line {@code [lab] tests N passed P
 * failed F skipped S} with every failure's stack trace. Exit 0 only when at least one test ran and
 * every test passed (a skipped or aborted test is not a pass); 1 otherwise, 2 on bad arguments.
 */
public final class RunTestClass {
    private RunTestClass() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: RunTestClass <test class>");
            System.exit(2);
        }
        LauncherDiscoveryRequest request =
                LauncherDiscoveryRequestBuilder.request()
                        .selectors(selectClass(Class.forName(args[0])))
                        .build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(request, listener);
        TestExecutionSummary s = listener.getSummary();
        PrintWriter out = new PrintWriter(System.out, true);
        s.printFailuresTo(out, 40);
        long skipped = s.getTestsSkippedCount() + s.getTestsAbortedCount();
        out.printf(
                "[lab] tests %d passed %d failed %d skipped %d%n",
                s.getTestsFoundCount(),
                s.getTestsSucceededCount(),
                s.getTestsFailedCount(),
                skipped);
        out.flush();
        boolean ok = s.getTestsFoundCount() > 0 && s.getTestsFailedCount() == 0 && skipped == 0;
        // Framework threads (Spark, Flink, Kafka) may outlive the tests: end the JVM explicitly.
        Runtime.getRuntime().halt(ok ? 0 : 1);
    }
}

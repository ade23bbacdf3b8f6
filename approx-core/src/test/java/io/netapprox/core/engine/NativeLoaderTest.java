package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.AtpStatus;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class NativeLoaderTest {

    @Test
    void loadsFromTheJarAndBindsNatives() {
        assertTrue(AtpNative.isAvailable(), () -> String.valueOf(AtpNative.unavailabilityCause()));
        assertNull(AtpNative.unavailabilityCause());
        assertEquals("0.1.0", AtpNative.version());
        assertArrayEquals(NativeEngine.expectedLayout(), NativeEngine.layoutInfo());
        assertEquals("NA_ERR_PEER_DEAD", NativeEngine.strerror(-7));
        for (AtpStatus s : AtpStatus.values()) {
            if (s != AtpStatus.UNKNOWN) {
                assertEquals(
                        s.nativeName(),
                        NativeEngine.strerror(s.code()),
                        "status names agree with na_strerror");
            }
        }
    }

    @Test
    void thePlatformDescriptionNamesTheCLibrary() {
        assertEquals(
                "glibc",
                NativeLibrary.libcOf(
                        "7f00-7f01 r-xp 00000000 fe:01 12 /usr/lib/x86_64-linux-gnu/libc.so.6\n"));
        assertEquals("glibc", NativeLibrary.libcOf("7f00-7f01 r-xp 0 0 0 /lib64/libc-2.17.so\n"));
        assertEquals(
                "musl", NativeLibrary.libcOf("7f00-7f01 r-xp 0 0 0 /lib/ld-musl-x86_64.so.1\n"));
        assertEquals("unknown", NativeLibrary.libcOf(""));
        // this JVM: the test machines run glibc
        assertEquals("glibc", NativeLibrary.libc());
        assertTrue(
                NativeLibrary.platformDescription("Linux", "amd64").endsWith(", libc=glibc"),
                NativeLibrary.platformDescription("Linux", "amd64"));
    }

    @Test
    void aSecondClassLoaderGetsItsOwnCopyOfTheLibrary() throws Exception {
        java.util.List<java.net.URL> urls = new java.util.ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            urls.add(java.nio.file.Path.of(e).toUri().toURL());
        }
        try (java.net.URLClassLoader cl =
                new java.net.URLClassLoader(
                        urls.toArray(new java.net.URL[0]), ClassLoader.getPlatformClassLoader())) {
            Class<?> nat = Class.forName(AtpNative.class.getName(), true, cl);
            assertTrue(nat != AtpNative.class);
            assertEquals(
                    Boolean.TRUE,
                    nat.getMethod("isAvailable").invoke(null),
                    () -> "unavailable in the second loader");
            Class<?> cfgClass = Class.forName(AtpConfig.class.getName(), true, cl);
            Object builder = cfgClass.getMethod("builder").invoke(null);
            builder.getClass().getMethod("bindAddress", String.class).invoke(builder, "127.0.0.1");
            Object cfg = builder.getClass().getMethod("build").invoke(builder);
            Class<?> ep = Class.forName(AtpEndpoint.class.getName(), true, cl);
            try (AutoCloseable endpoint =
                    (AutoCloseable) ep.getMethod("open", cfgClass).invoke(null, cfg)) {
                int port = (Integer) ep.getMethod("localPort").invoke(endpoint);
                assertTrue(port > 0);
            }
        }
        // and this loader's copy still works
        try (AtpEndpoint e =
                AtpEndpoint.open(AtpConfig.builder().bindAddress("127.0.0.1").build())) {
            assertTrue(e.localPort() > 0);
        }
    }

    @Test
    void unsupportedPlatformErrorNamesThePlatform() {
        UnsatisfiedLinkError e =
                assertThrows(
                        UnsatisfiedLinkError.class,
                        () -> NativeLibrary.checkPlatform("Mac OS X", "aarch64"));
        assertTrue(e.getMessage().contains("os.name=Mac OS X"), e.getMessage());
        assertTrue(e.getMessage().contains("os.arch=aarch64"), e.getMessage());
        assertTrue(e.getMessage().contains("linux-x86_64, linux-aarch64"), e.getMessage());
        assertEquals("linux-x86_64", NativeLibrary.checkPlatform("Linux", "amd64"));
        assertEquals("linux-x86_64", NativeLibrary.classifier("Linux", "x86_64"));
        assertEquals("linux-aarch64", NativeLibrary.classifier("Linux", "aarch64"));
        assertNull(NativeLibrary.classifier("Linux", "arm"));
        assertNull(NativeLibrary.classifier("Linux", "ppc64le"));
        assertNull(NativeLibrary.classifier("Windows 11", "amd64"));
    }

    @Test
    void exportsOnlyTheCApiAndJniEntryPoints() throws Exception {
        java.nio.file.Path so =
                java.nio.file.Path.of(
                        "target/classes/META-INF/native/linux-x86_64/libnetapprox.so");
        if (!java.nio.file.Files.exists(so)) {
            return;
        }
        Process p =
                new ProcessBuilder("nm", "-D", "--defined-only", so.toString())
                        .redirectErrorStream(true)
                        .start();
        String out = new String(p.getInputStream().readAllBytes());
        p.waitFor();
        if (p.exitValue() != 0) {
            return; // no binutils
        }
        for (String line : out.split("\n")) {
            String[] parts = line.trim().split("\\s+");
            String sym = parts[parts.length - 1];
            assertTrue(
                    sym.startsWith("na_") || sym.equals("JNI_OnLoad") || sym.equals("JNI_OnUnload"),
                    "unexpected exported symbol " + sym);
            assertTrue(!sym.startsWith("Java_"), sym);
        }
        assertTrue(out.contains("JNI_OnLoad"));
    }

    @Test
    void nativeHeapCounterWorksWhereGlibcHasMallinfo2() throws Exception {
        // The shipped library targets glibc 2.17, so it looks mallinfo2 (glibc 2.33) up at run
        // time:
        // LifecycleTest's native-heap leak check needs the counter wherever the C library has it.
        Process p =
                new ProcessBuilder("getconf", "GNU_LIBC_VERSION").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        p.waitFor();
        org.junit.jupiter.api.Assumptions.assumeTrue(
                p.exitValue() == 0 && out.matches("glibc \\d+\\.\\d+.*"), "not glibc: " + out);
        String[] v = out.substring("glibc ".length()).split("\\.");
        int major = Integer.parseInt(v[0]);
        int minor = Integer.parseInt(v[1].replaceAll("\\D.*", ""));
        long inUse = NativeEngine.mallocInUse();
        if (major > 2 || minor >= 33) {
            assertTrue(inUse > 0, out + ": mallocInUse() = " + inUse);
        } else {
            assertEquals(-1, inUse, out);
        }
    }

    @Test
    void javaDefaultsMatchNaConfigInit() {
        long[] l = new long[AtpConfig.NATIVE.size()];
        assertEquals(0, NativeEngine.configDefaults(l));
        long[] jl = AtpConfig.builder().build().toNative();
        for (int i = 0; i < l.length; i++) {
            assertEquals(l[i], jl[i], "default of " + AtpConfig.NATIVE.names().get(i));
        }
        assertArrayEquals(l, jl);
        assertEquals(0, NativeEngine.configDefaults(new long[l.length]), "exact length accepted");
        assertEquals(
                AtpStatus.INVALID_ARGUMENT.code(),
                NativeEngine.configDefaults(new long[l.length - 1]),
                "a record of another length is refused");
    }

    @Test
    void everyRecordCrossingJniHasTheLibrarysSlots() {
        for (NativeRecord<?> r : NativeLibrary.records()) {
            assertEquals(
                    java.util.List.of(NativeEngine.recordFields(r.id())),
                    r.names(),
                    "record " + r.id());
        }
        assertNull(NativeEngine.recordFields(99));
        // the counters na_stats lacked are exported by name
        java.util.List<String> stats = AtpStats.NATIVE.names();
        assertTrue(
                stats.contains("auth_policy_mismatches") && stats.contains("farewells_dropped"),
                stats.toString());
    }

    @Test
    void aRecordThatDriftedFailsTheLoadNamingTheSlot() {
        String[] lib = NativeEngine.recordFields(NativeEngine.RECORD_CONFIG);
        String[] swapped = lib.clone();
        swapped[2] = lib[3];
        swapped[3] = lib[2];
        UnsatisfiedLinkError e =
                assertThrows(UnsatisfiedLinkError.class, () -> AtpConfig.NATIVE.verify(swapped));
        assertTrue(
                e.getMessage().contains("slot 2")
                        && e.getMessage().contains("tlr_floor")
                        && e.getMessage().contains("reaction_speed"),
                e.getMessage());
        String[] longer = java.util.Arrays.copyOf(lib, lib.length + 1);
        longer[lib.length] = "new_field";
        e = assertThrows(UnsatisfiedLinkError.class, () -> AtpConfig.NATIVE.verify(longer));
        assertTrue(e.getMessage().contains("new_field"), e.getMessage());
        assertThrows(UnsatisfiedLinkError.class, () -> AtpConfig.NATIVE.verify(null));
    }

    @Test
    void configValidationNamesTheField() {
        assertMessage("lineRateBps", () -> AtpConfig.builder().lineRateBps(10).build());
        assertMessage("maxDatagram", () -> AtpConfig.builder().maxDatagram(100).build());
        assertMessage("reactionSpeed", () -> AtpConfig.builder().reactionSpeed(0).build());
        assertMessage(
                "peerDeathTimeout",
                () -> AtpConfig.builder().peerDeathTimeout(Duration.ZERO).build());
        assertMessage("recvBufferBytes", () -> AtpConfig.builder().recvBufferBytes(1000).build());
        assertMessage(
                "dscpByClass[3]", () -> AtpConfig.builder().dscpByClass(1, 2, 3, 64, 5, 6, 7, 8));
        assertMessage("dscpByClass needs exactly 8", () -> AtpConfig.builder().dscpByClass(1, 2));
        assertMessage(
                "fault drop fraction", () -> AtpConfig.builder().faultInjection(1.0, 0, 1).build());
        assertMessage("bindPort", () -> AtpConfig.builder().bindPort(70000).build());
        assertMessage(
                "bindAddress", () -> AtpConfig.builder().bindAddress("not an address!").build());
        assertMessage("eventBatchSize", () -> AtpConfig.builder().eventBatchSize(0).build());
        AtpConfig c =
                AtpConfig.builder()
                        .mode(AtpMode.RC_MRDF)
                        .dscpByClass(0, 1, 2, 3, 4, 5, 6, 7)
                        .build();
        assertEquals(AtpMode.RC_MRDF, c.toBuilder().build().mode());
        assertEquals(3, c.dscpByClass()[3]);
    }

    @Test
    void engineRejectsAnUnusableBindAddress() {
        RuntimeException e =
                assertThrows(
                        RuntimeException.class,
                        () ->
                                AtpEndpoint.open(
                                        AtpConfig.builder().bindAddress("1.2.3.4.5").build()));
        assertTrue(
                e instanceof IllegalArgumentException || e instanceof AtpException, e.toString());
        assertTrue(e.getMessage().contains("1.2.3.4.5"), e.getMessage());
    }

    private static void assertMessage(
            String fragment, org.junit.jupiter.api.function.Executable ex) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, ex);
        assertTrue(
                e.getMessage().contains(fragment),
                () -> "'" + e.getMessage() + "' should mention " + fragment);
    }
}

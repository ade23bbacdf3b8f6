package io.netapprox.core.engine;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads libnetapprox once per class loader, in this order (like Netty's {@code
 * NativeLibraryLoader}):
 *
 * <ol>
 *   <li>the file (or directory containing {@code libnetapprox.so}) named by the system property
 *       {@value #PATH_PROPERTY};
 *   <li>the copy inside the jar, {@code META-INF/native/<platform>/libnetapprox.so}, extracted to a
 *       unique temp file {@code libnetapprox@<java package>@<random>.so} (one per class loader, so
 *       two class loaders get two independent copies; the package in the name lets JNI_OnLoad find
 *       the - possibly relocated - classes), deleted right after loading (deleteOnExit as a
 *       fallback);
 *   <li>{@code System.loadLibrary("netapprox")}, i.e. {@code java.library.path}.
 * </ol>
 *
 * Failure is an {@link UnsatisfiedLinkError} naming the platform ({@code os.name}/{@code os.arch})
 * and every attempt. {@code -D}{@value #DISABLE_PROPERTY}{@code =true} makes loading fail at once
 * (as on a platform without a build): for tests of what runs without the engine, e.g. the
 * transport's TCP fallback.
 */
final class NativeLibrary {
    static final String PATH_PROPERTY = "io.netapprox.native.path";

    /** {@code true}: the library is never loaded (the engine is unavailable, naming this). */
    static final String DISABLE_PROPERTY = "io.netapprox.native.disable";

    static final String LIBRARY_NAME = "netapprox";
    static final String SUPPORTED = "linux-x86_64, linux-aarch64";
    private static final Logger log = LoggerFactory.getLogger(NativeLibrary.class);

    private NativeLibrary() {}

    /** The classifier used in {@code META-INF/native/}, or null when the platform has no build. */
    static String classifier(String osName, String osArch) {
        String os = osName == null ? "" : osName.toLowerCase(Locale.ROOT);
        String arch = osArch == null ? "" : osArch.toLowerCase(Locale.ROOT);
        if (os.startsWith("linux") && (arch.equals("amd64") || arch.equals("x86_64"))) {
            return "linux-x86_64";
        }
        if (os.startsWith("linux") && (arch.equals("aarch64") || arch.equals("arm64"))) {
            return "linux-aarch64";
        }
        return null;
    }

    static String platformDescription(String osName, String osArch) {
        return "os.name=" + osName + ", os.arch=" + osArch + ", libc=" + libc();
    }

    /**
     * The C library this JVM runs on, from the libraries it has mapped ({@code glibc}, {@code
     * musl}), or {@code unknown}: a musl node (Alpine) cannot load the glibc build, which needs
     * glibc 2.17 or newer.
     */
    static String libc() {
        try {
            return libcOf(Files.readString(Path.of("/proc/self/maps")));
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** {@link #libc()} from the text of a {@code /proc/<pid>/maps}. */
    static String libcOf(String maps) {
        if (maps.contains("ld-musl-") || maps.contains("/libc.musl-")) {
            return "musl";
        }
        if (maps.contains("/libc.so.6") || maps.contains("/libc-2.")) {
            return "glibc";
        }
        return "unknown";
    }

    /** Throws when the current (or given) platform has no libnetapprox build. */
    static String checkPlatform(String osName, String osArch) {
        String c = classifier(osName, osArch);
        if (c == null) {
            throw new UnsatisfiedLinkError(
                    "libnetapprox is not available for this platform ("
                            + platformDescription(osName, osArch)
                            + "); supported: "
                            + SUPPORTED
                            + ". Build native/ for it and point -D"
                            + PATH_PROPERTY
                            + " at the library.");
        }
        return c;
    }

    /** Loads the library and checks the JNI record layouts. */
    static void load() {
        if (Boolean.getBoolean(DISABLE_PROPERTY)) {
            throw new UnsatisfiedLinkError(
                    "loading libnetapprox is disabled by -D" + DISABLE_PROPERTY + "=true");
        }
        String osName = System.getProperty("os.name");
        String osArch = System.getProperty("os.arch");
        List<String> attempts = new ArrayList<>();
        String explicit = System.getProperty(PATH_PROPERTY);
        boolean loaded = false;
        if (explicit != null && !explicit.isEmpty()) {
            File f = new File(explicit);
            if (f.isDirectory()) {
                f = new File(f, System.mapLibraryName(LIBRARY_NAME));
            }
            try {
                System.load(f.getAbsolutePath());
                loaded = true;
            } catch (UnsatisfiedLinkError e) {
                attempts.add(PATH_PROPERTY + "=" + explicit + ": " + e.getMessage());
            }
        }
        String classifier = classifier(osName, osArch);
        if (!loaded && classifier != null) {
            try {
                loaded = loadFromJar(classifier, attempts);
            } catch (UnsatisfiedLinkError e) {
                attempts.add("jar: " + e.getMessage());
            }
        } else if (!loaded) {
            attempts.add("jar: no build for this platform (supported: " + SUPPORTED + ")");
        }
        if (!loaded) {
            try {
                System.loadLibrary(LIBRARY_NAME);
                loaded = true;
            } catch (UnsatisfiedLinkError e) {
                attempts.add(
                        "java.library.path="
                                + System.getProperty("java.library.path")
                                + ": "
                                + e.getMessage());
            }
        }
        if (!loaded) {
            throw new UnsatisfiedLinkError(
                    "could not load libnetapprox on "
                            + platformDescription(osName, osArch)
                            + (classifier == null
                                    ? " (unsupported platform; supported: " + SUPPORTED + ")"
                                    : "")
                            + "; attempts: "
                            + attempts);
        }
        int[] layout;
        try {
            layout = NativeEngine.layoutInfo();
        } catch (UnsatisfiedLinkError e) {
            throw new UnsatisfiedLinkError(
                    "libnetapprox was loaded but its JNI natives are not registered (built without JDK headers?): "
                            + e.getMessage());
        }
        if (!Arrays.equals(layout, NativeEngine.expectedLayout())) {
            throw new UnsatisfiedLinkError(
                    "libnetapprox JNI layout mismatch: native "
                            + Arrays.toString(layout)
                            + ", Java "
                            + Arrays.toString(NativeEngine.expectedLayout())
                            + " (jar and library from different builds?)");
        }
        // Every record that crosses JNI, slot by slot: names (and byte offsets) must be the
        // library's.
        for (NativeRecord<?> r : records()) {
            r.verify(NativeEngine.recordFields(r.id()));
        }
    }

    /** The records that cross JNI, each checked against the library when it loads. */
    static List<NativeRecord<?>> records() {
        return List.of(
                AtpConfig.NATIVE,
                NativeReports.REPORT,
                NativeReports.GROUP,
                AtpStats.NATIVE,
                EVENT,
                SUBMIT);
    }

    // (Here rather than in NativeEngine: these are read while NativeEngine may still be
    // initializing.)
    /** The event record's byte layout. */
    static final NativeRecord<Void> EVENT =
            NativeRecord.layout(
                    NativeEngine.RECORD_EVENT,
                    "event record",
                    "type",
                    NativeEngine.EV_TYPE,
                    "status",
                    NativeEngine.EV_STATUS,
                    "session",
                    NativeEngine.EV_SESSION,
                    "job",
                    NativeEngine.EV_JOB,
                    "message",
                    NativeEngine.EV_MESSAGE,
                    "group_id",
                    NativeEngine.EV_GROUP,
                    "data",
                    NativeEngine.EV_DATA,
                    "len",
                    NativeEngine.EV_LEN,
                    "handle",
                    NativeEngine.EV_HANDLE,
                    "report",
                    NativeEngine.EV_REPORT,
                    "epoch_at_ns",
                    NativeEngine.EV_EPOCH_AT,
                    "epoch_tlr",
                    NativeEngine.EV_EPOCH_TLR,
                    "epoch_loss",
                    NativeEngine.EV_EPOCH_LOSS,
                    "epoch_rate_bps",
                    NativeEngine.EV_EPOCH_RATE,
                    "epoch_priority_class",
                    NativeEngine.EV_EPOCH_CLASS,
                    "reserved",
                    NativeEngine.EV_RESERVED);

    /** The submit descriptor's byte layout. */
    static final NativeRecord<Void> SUBMIT =
            NativeRecord.layout(
                    NativeEngine.RECORD_SUBMIT,
                    "submit descriptor",
                    "group_index",
                    NativeEngine.SUB_GROUP,
                    "index",
                    NativeEngine.SUB_INDEX,
                    "address",
                    NativeEngine.SUB_ADDRESS,
                    "length",
                    NativeEngine.SUB_LENGTH,
                    "status",
                    NativeEngine.SUB_STATUS);

    private static boolean loadFromJar(String classifier, List<String> attempts) {
        String resource =
                "META-INF/native/" + classifier + "/" + System.mapLibraryName(LIBRARY_NAME);
        ClassLoader cl = NativeLibrary.class.getClassLoader();
        URL url = cl == null ? ClassLoader.getSystemResource(resource) : cl.getResource(resource);
        if (url == null) {
            attempts.add("jar: resource " + resource + " not found");
            return false;
        }
        String pkg =
                NativeLibrary.class.getPackage() != null
                        ? NativeLibrary.class.getPackage().getName()
                        : NativeLibrary.class
                                .getName()
                                .substring(0, NativeLibrary.class.getName().lastIndexOf('.'));
        Path tmp = null;
        try {
            String dir = System.getProperty("io.netapprox.native.workdir");
            tmp =
                    dir == null
                            ? Files.createTempFile("lib" + LIBRARY_NAME + "@" + pkg + "@", ".so")
                            : Files.createTempFile(
                                    Path.of(dir), "lib" + LIBRARY_NAME + "@" + pkg + "@", ".so");
            try (InputStream in = url.openStream()) {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            }
            System.load(tmp.toAbsolutePath().toString());
            return true;
        } catch (IOException e) {
            attempts.add("jar: extracting " + resource + " failed: " + e);
            return false;
        } finally {
            if (tmp != null) {
                // The mapping survives the unlink; nothing is left in the temp directory even if
                // the JVM crashes later.
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    log.debug("could not delete {}; deleting on exit", tmp, e);
                    tmp.toFile().deleteOnExit();
                }
            }
        }
    }
}

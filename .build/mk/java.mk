# The Java binding (java/): a JNI library (java/src/*.rs, crate polyflake-java, jni 0.22) and the
# dev.polyflake API over it (java/src/main/java), built by Maven for Java 11 bytecode
# (--release 11, -Xlint:all -Werror) and tested with JUnit 5 through Surefire on two JDKs. The jar
# carries the library as a resource; tests/dist/java_guide.sh (make test-dist) installs the jar
# from a file-based Maven repository into a fresh project with no Rust on PATH.

# Maven, and the JDK both Maven and the tests run on first (Temurin 25 is installed beside it on
# this machine kind, outside apt).
APT_PACKAGES += maven openjdk-17-jdk-headless
DEPS_TARGETS += deps-java
BUILD_TARGETS += build-java build-polyglot-java
TEST_TARGETS += test-java

JAVA17_HOME ?= /usr/lib/jvm/java-17-openjdk-amd64
JAVA25_HOME ?= /usr/lib/jvm/temurin-25-jdk-amd64
JAVA_DIR := $(ROOT)/java
JAVA_PLATFORM := linux-x86_64
JAVA_NATIVE := $(CARGO_TARGET_DIR)/java-native
JAVA_LIB := $(JAVA_NATIVE)/$(JAVA_PLATFORM)/libpolyflake_java.so
# -q: Maven's own chatter off (Surefire's summary and every failure still print).
JAVA_MVN = mvn -B -q -Dstyle.color=never -f $(JAVA_DIR)/pom.xml -Dpolyflake.native.root=$(JAVA_NATIVE) -Dpolyflake.root=$(ROOT)

deps-java: ## OpenJDK 17 (JAVA17_HOME) and Temurin 25 (JAVA25_HOME) are there, and Maven
	$(call say,Java: OpenJDK 17 ($(JAVA17_HOME)) and Temurin 25 ($(JAVA25_HOME)) and Maven)
	@$(B) jdks $(JAVA17_HOME) $(JAVA25_HOME) && $(B) need mvn "'make deps-apt' installs maven"
	@JAVA_HOME=$(JAVA17_HOME) mvn -v | sed -n 1p

build-java: deps-java ## the JNI library (release), staged as target/java-native/linux-x86_64/libpolyflake_java.so for the jar
	$(call say,Java: the JNI library (cargo build --release -p polyflake-java) staged for the jar as $(JAVA_LIB))
	$(CARGO) build --release -p polyflake-java --features workspace-hack
	@mkdir -p $(dir $(JAVA_LIB))
	cp $(POLYFLAKE_RELEASE_DIR)/libpolyflake_java.so $(JAVA_LIB)
# with_zookeeper.sh appends the ensemble as the last argument (and sets POLYFLAKE_TEST_ZOOKEEPER);
# the etcd tests start their own etcd.
test-java: build-java ## [part] JUnit 5 on OpenJDK 17, then on Temurin 25, beside a real ZooKeeper: scenarios on both clocks, vectors, bad input, file/etcd/ZooKeeper leases, the Cleaner, 10,000 virtual threads (25 only); a node id handed between JVMs (close, System.exit, SIGKILL; faketime), two class loaders, the kernel's clock word
	$(call say,Java: JUnit 5 on OpenJDK 17 then Temurin 25 beside a real ZooKeeper (scenarios on both clocks; vectors; bad input; leases on files and etcd and ZooKeeper; Cleaner; virtual threads on 25; restart guard across JVMs, faketime, class loaders; clock sync))
	POLYFLAKE_REQUIRE_STORES=true $(ROOT)/tests/stores/with_zookeeper.sh sh -c '\
	  echo "--- OpenJDK 17" && JAVA_HOME=$(JAVA17_HOME) $(JAVA_MVN) -Dpolyflake.build.dir=$(CARGO_TARGET_DIR)/java-17 -Dmaven.javadoc.skip=true -Dmaven.source.skip=true verify && \
	  echo "--- Temurin 25" && MAVEN_OPTS=--sun-misc-unsafe-memory-access=allow JAVA_HOME=$(JAVA25_HOME) $(JAVA_MVN) -Dpolyflake.build.dir=$(CARGO_TARGET_DIR)/java-25 -Dmaven.javadoc.skip=true -Dmaven.source.skip=true -Dpolyflake.require.virtual.threads=true verify' java-tests
	@for d in java-17 java-25; do python3 -c 'import sys,glob,xml.etree.ElementTree as E; t=[E.parse(f).getroot() for f in glob.glob(sys.argv[1]+"/surefire-reports/TEST-*.xml")]; print(sys.argv[2]+": %d tests, %d skipped, %d failed" % (sum(int(x.get("tests")) for x in t), sum(int(x.get("skipped")) for x in t), sum(int(x.get("failures"))+int(x.get("errors")) for x in t)))' $(CARGO_TARGET_DIR)/$$d $$d; done

# The jar from the tested release library, stripped, for linux-x86_64 (the release workflow adds
# the other platforms' under dev/polyflake/native/<platform>/), hooked into dist and test-dist.
dist: dist-java
test-dist: test-dist-java
JAVA_DIST_NATIVE := $(CARGO_TARGET_DIR)/dist-stage/java-native

dist-java: build-java ## [tool] dist/polyflake-VERSION.jar (the stripped linux-x86_64 library inside), its -sources and -javadoc jars and POM
	$(call say,Java: dist/polyflake-$(DIST_VERSION).jar with its -sources and -javadoc jars and POM (libpolyflake_java.so for $(JAVA_PLATFORM) inside; stripped))
	rm -rf $(JAVA_DIST_NATIVE) && mkdir -p $(JAVA_DIST_NATIVE)/$(JAVA_PLATFORM) $(DIST)
	strip --strip-all -o $(JAVA_DIST_NATIVE)/$(JAVA_PLATFORM)/libpolyflake_java.so $(JAVA_LIB)
	JAVA_HOME=$(JAVA17_HOME) mvn -B -q -f $(JAVA_DIR)/pom.xml -Dpolyflake.native.root=$(JAVA_DIST_NATIVE) \
	  -Dpolyflake.build.dir=$(CARGO_TARGET_DIR)/java-dist -DskipTests package
	rm -f $(DIST)/polyflake-*.jar
	cp $(CARGO_TARGET_DIR)/java-dist/polyflake-$(DIST_VERSION).jar $(CARGO_TARGET_DIR)/java-dist/polyflake-$(DIST_VERSION)-sources.jar \
	  $(CARGO_TARGET_DIR)/java-dist/polyflake-$(DIST_VERSION)-javadoc.jar $(DIST)/
	cp $(JAVA_DIR)/pom.xml $(DIST)/polyflake-$(DIST_VERSION).pom
	unzip -l $(DIST)/polyflake-$(DIST_VERSION).jar | grep -E 'native/|polyflake/Snowflake.class'
	@ls -l $(DIST)/polyflake-$(DIST_VERSION)*.jar $(DIST)/polyflake-$(DIST_VERSION).pom
test-dist-java: dist-java ## [part] the jar from a file-based Maven repository into a fresh Maven project with no Rust on PATH (part of test-dist)
	$(call say,Java: the jar from a file-based Maven repository into a fresh Maven project with no Rust on PATH)
	JAVA_HOME=$(JAVA17_HOME) bash tests/dist/java_guide.sh $(ROOT) $(DIST) $(DIST_VERSION)

# Compiled against the jar the tests built (java-17's).
JAVA_POLYGLOT := $(CARGO_TARGET_DIR)/polyglot/java
build-polyglot-java: build-java ## the uniqueness run's Java participant: tests/polyglot/Participant.java compiled against the jar
	$(call say,Java participant of the uniqueness run: tests/polyglot/Participant.java against the jar)
	JAVA_HOME=$(JAVA17_HOME) $(JAVA_MVN) -Dpolyflake.build.dir=$(CARGO_TARGET_DIR)/java-17 -DskipTests \
	  -Dmaven.javadoc.skip=true -Dmaven.source.skip=true package
	@mkdir -p $(JAVA_POLYGLOT)
	$(JAVA17_HOME)/bin/javac --release 11 -Xlint:all -Werror -d $(JAVA_POLYGLOT) \
	  -cp $(CARGO_TARGET_DIR)/java-17/polyflake-$(DIST_VERSION).jar $(ROOT)/tests/polyglot/Participant.java
	cp $(CARGO_TARGET_DIR)/java-17/polyflake-$(DIST_VERSION).jar $(JAVA_POLYGLOT)/polyflake.jar

# The JMH benchmark (java/bench/pom.xml: JMH, Hutool 5.8, uuid-creator) on the jar
# build-polyglot-java packages: 15 cases, each 1 fork of 3 x 1 s warm-up and 5 x 1 s measurement.
# Static node ids with the restart guard off, in a host scope of their own (a test suite beside it
# keeps its own). E.g. JMH_ARGS="-f 2 -wi 5 -i 10" for an idle re-run, JMH_ARGS="... -prof gc",
# or some cases only: JMH_CASES='IdBench.polyflakeNextIds' (report.py notes the others).
bench: bench-java
JAVA_BENCH_HOME ?= $(JAVA25_HOME)
JMH_ARGS ?= -f 1 -wi 3 -w 1s -i 5 -r 1s
JMH_CASES ?= dev.polyflake.bench.IdBench
JAVA_BENCH_DIR := $(CARGO_TARGET_DIR)/java-bench
JAVA_BENCH_JAR := $(CARGO_TARGET_DIR)/java-17/polyflake-$(DIST_VERSION).jar
# The JVM and classpath the benchmarks use (JMH forks inherit the JVM's flags).
JAVA_BENCH_JVM = java=$(JAVA_BENCH_HOME)/bin/java; \
	access=$$($$java --enable-native-access=ALL-UNNAMED -version >/dev/null 2>&1 && echo --enable-native-access=ALL-UNNAMED); \
	cp=$(JAVA_BENCH_DIR)/classes:$(JAVA_BENCH_JAR):$$(cat $(JAVA_BENCH_DIR)/classpath.txt)

java-bench-classes: build-polyglot-java ## java/bench/ compiled against the jar, its Maven classpath in target/java-bench/classpath.txt
	JAVA_HOME=$(JAVA_BENCH_HOME) mvn -B -q -Dstyle.color=never -f $(JAVA_DIR)/bench/pom.xml -Dpolyflake.jar=$(JAVA_BENCH_JAR) \
	  -Dpolyflake.build.dir=$(JAVA_BENCH_DIR) compile dependency:build-classpath -Dmdep.outputFile=$(JAVA_BENCH_DIR)/classpath.txt
bench-java: java-bench-classes ## [long] the JMH benchmark (about 2 minutes; JMH_ARGS, JMH_CASES): nextId strict and monotonic on both clocks, nextIds(4096), uuid7(), ulid(), 8 threads, beside System.currentTimeMillis(), Hutool's Snowflake and uuid-creator; java/bench/report.py prints the ratios and BENCHMARKS.md's rows
	$(call say,Java benchmark (JMH, $(JAVA_BENCH_HOME)): $(JMH_ARGS); JSON in $(JAVA_BENCH_DIR)/jmh.json)
	@load=$$(cut -d' ' -f1-3 /proc/loadavg); $(JAVA_BENCH_JVM); \
	POLYFLAKE_HOST_SCOPE=bench-java $$java $$access -cp $$cp \
	  org.openjdk.jmh.Main $(JMH_ARGS) -rf json -rff $(JAVA_BENCH_DIR)/jmh.json '$(JMH_CASES)' && \
	python3 $(JAVA_DIR)/bench/report.py $(JAVA_BENCH_DIR)/jmh.json "$$load"

# The gate's rows (75 s warm at load 3 on 2 cores): java/bench/.../Check.java runs
# JMH_CHECK_ROUNDS rounds, each case and its references once per round in a fresh JVM (one JMH
# fork, JMH_CHECK_ARGS); JSON rows on stdout, everything else on stderr. The forks load the staged
# library (-Dpolyflake.library: not 55 MB inflated from the jar at each of the 55 JVM starts,
# 0.6 s each) on a fixed 256 MB heap (a growing heap's fresh pages made nextIds(4096) vary 20x
# from fork to fork under load). The command, from the repository's root:
#   POLYFLAKE_HOST_SCOPE=bench-check-java-$$ /usr/lib/jvm/temurin-25-jdk-amd64/bin/java \
#     --enable-native-access=ALL-UNNAMED -Dpolyflake.library=target/java-native/linux-x86_64/libpolyflake_java.so \
#     -cp target/java-bench/classes:target/java-17/polyflake-0.1.0.jar:$(cat target/java-bench/classpath.txt) \
#     dev.polyflake.bench.Check 5 -wi 2 -w 150ms -i 3 -r 150ms -jvmArgsAppend '-Xms256m -Xmx256m'
JMH_CHECK_ROUNDS ?= 5
JMH_CHECK_ARGS ?= -wi 2 -w 150ms -i 3 -r 150ms -jvmArgsAppend '-Xms256m -Xmx256m'
bench-check-java: ## [long] the Java rows of make bench-check: the same cases, short, in interleaved rounds, each a ratio to System.currentTimeMillis() (75 s warm)
	@$(MAKE) -s --no-print-directory java-bench-classes >&2
	@$(JAVA_BENCH_JVM); \
	POLYFLAKE_HOST_SCOPE=bench-check-java-$$$$ $$java $$access -Dpolyflake.library=$(JAVA_LIB) -cp $$cp \
	  dev.polyflake.bench.Check $(JMH_CHECK_ROUNDS) $(JMH_CHECK_ARGS)

# java/bench/src/main/java/dev/polyflake/bench/CeilingCpu.java (not JMH); CEILING_ARGS: seconds
# per timed span and rounds.
CEILING_ARGS ?= 3 3
bench-java-ceiling: java-bench-classes ## [long] CPU-seconds per wall-second of a strict nextId() loop at 41/10/12's ceiling (4,096,000 IDs/s), beside Hutool's Snowflake (CEILING_ARGS; about 25 s)
	$(call say,Java: CPU-seconds per wall-second of a strict nextId() loop at 41/10/12's ceiling, beside Hutool's Snowflake ($(JAVA_BENCH_HOME)))
	@$(JAVA_BENCH_JVM); \
	POLYFLAKE_HOST_SCOPE=bench-java-ceiling-$$$$ $$java $$access -cp $$cp dev.polyflake.bench.CeilingCpu $(CEILING_ARGS)

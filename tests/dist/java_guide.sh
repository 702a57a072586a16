#!/usr/bin/env bash
# The Java jar installed as users install it (make test-dist, through .build/mk/java.mk's
# test-dist-java): dist/'s polyflake-VERSION.jar (with its -sources and -javadoc jars and its POM)
# deployed to a file-based Maven repository, then with cargo, rustc and rustup off PATH a fresh
# Maven project depending on dev.polyflake:polyflake:VERSION from that repository only compiles
# tests/dist/java/Smoke.java and runs it: the native library comes out of the jar at first use.
# The same jar told it runs on another platform (-Dos.arch) fails with an error naming it.
# Maven's plugins come from the user's local repository (copied, without dev/polyflake, so the
# jar can only come from the file repository) or Maven Central.
#
#   java_guide.sh ROOT DIST VERSION     (JAVA_HOME: the JDK to build and run with)
set -euo pipefail
root=$1 dist=$2 version=$3
work=$(mktemp -d /tmp/polyflake-java-dist.XXXXXX)
trap 'rm -rf "$work"' EXIT
step() { printf '\n--- %s\n' "$*"; }
fail() { echo "FAIL: $*"; exit 1; }
java=${JAVA_HOME:+$JAVA_HOME/bin/}java

step "Java: deploy polyflake-$version.jar (+ sources, javadoc, POM) to file://$work/repo"
for f in "polyflake-$version.jar" "polyflake-$version-sources.jar" "polyflake-$version-javadoc.jar" "polyflake-$version.pom"; do
  [ -f "$dist/$f" ] || fail "$dist/$f is missing (make dist-java)"
done
# A local repository of our own: the user's plugins (hard links), never a dev/polyflake copy.
m2=$work/m2
mkdir -p "$m2"
if [ -d "$HOME/.m2/repository" ]; then cp -al "$HOME/.m2/repository/." "$m2/"; fi
rm -rf "$m2/dev/polyflake"
mvn() { command mvn -B -q -Dmaven.repo.local="$m2" "$@"; }
mvn deploy:deploy-file -Dfile="$dist/polyflake-$version.jar" -DpomFile="$dist/polyflake-$version.pom" \
  -Dsources="$dist/polyflake-$version-sources.jar" -Djavadoc="$dist/polyflake-$version-javadoc.jar" \
  -Durl="file://$work/repo" -DrepositoryId=polyflake-local
for c in "" -sources -javadoc; do
  [ -f "$work/repo/dev/polyflake/polyflake/$version/polyflake-$version$c.jar" ] || fail "the repository has no polyflake-$version$c.jar"
done
rm -rf "$m2/dev/polyflake"
echo "deployed: $(cd "$work/repo" && find dev -name '*.jar' | sort | tr '\n' ' ')"

step "PATH without cargo, rustc and rustup"
no_rust=""
IFS=: read -ra dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  [ -x "$d/cargo" ] || [ -x "$d/rustc" ] || [ -x "$d/rustup" ] || no_rust=${no_rust:+$no_rust:}$d
done
export PATH=$no_rust
unset CARGO RUSTC RUSTUP_TOOLCHAIN CARGO_TARGET_DIR
for tool in cargo rustc rustup; do
  ! command -v "$tool" > /dev/null || fail "$tool is still on PATH"
done

step "a fresh Maven project depending on dev.polyflake:polyflake:$version"
app=$work/app
mkdir -p "$app/src/main/java"
cp "$root/tests/dist/java/Smoke.java" "$app/src/main/java/"
cat > "$app/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>polyflake-smoke</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>11</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <repositories>
    <repository><id>polyflake-local</id><url>file://$work/repo</url></repository>
  </repositories>
  <dependencies>
    <dependency><groupId>dev.polyflake</groupId><artifactId>polyflake</artifactId><version>$version</version></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version></plugin>
    </plugins>
  </build>
</project>
POM
(cd "$app" && mvn compile dependency:build-classpath -Dmdep.outputFile=cp.txt)
grep -q "$m2/dev/polyflake/polyflake/$version/polyflake-$version.jar" "$app/cp.txt" || fail "classpath: $(cat "$app/cp.txt")"

step "run it: the native library loads from the jar"
(cd "$app" && "$java" -cp "target/classes:$(cat cp.txt)" Smoke) | tee "$work/smoke.out"
grep -q "^id " "$work/smoke.out" || fail "the smoke program printed no id"

step "the jar on a platform it has no library for: a clear error naming the platform"
if (cd "$app" && "$java" -Dos.arch=riscv64 -cp "target/classes:$(cat cp.txt)" Smoke) > "$work/other.out" 2>&1; then
  fail "ran on a platform the jar has no library for"
fi
grep -q "no native library for the platform linux-riscv64" "$work/other.out" || { cat "$work/other.out"; fail "the error does not name the platform"; }
grep -m1 "no native library" "$work/other.out"
echo "Java: the jar installed from a file-based Maven repository works with no Rust on PATH"

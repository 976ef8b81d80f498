"""A Maven project's dependencies for its tests, so that a test by name runs with them: the test classpath Surefire
wrote into its reports when ``mvn test`` ran (``target/surefire-reports/TEST-*.xml``), else ``mvn -o
dependency:build-classpath`` (offline: the jars already in ~/.m2, nothing downloaded), asked once per version of the
pom.xml and kept in the temporary directory. A project Maven cannot resolve offline (a parent pom or the plugin not
in ~/.m2) goes without them: its tests that need them fail with NoClassDefFoundError, and the verdict says to pass
``-cp``."""

from __future__ import annotations

import glob
import hashlib
import html
import os
import re
import shutil
import tempfile

from polydbg.testing.plan import run

MAVEN_S = 120.0  # Maven starting and reading ~/.m2 (a few seconds) on a loaded machine
_SUREFIRE_CLASSPATH = re.compile(r'<property name="surefire\.test\.class\.path" value="([^"]*)"')


async def dependencies(cwd: str) -> list[str]:
    """The jars of the project's test classpath (its own classes left out), or none."""
    pom = os.path.join(cwd, "pom.xml")
    mvn = shutil.which("mvn")
    if not os.path.isfile(pom):
        return []
    reported = _surefire_classpath(cwd)
    if reported or mvn is None:
        return reported
    seen = os.stat(pom)
    key = hashlib.sha256(f"{os.path.realpath(pom)}\0{seen.st_mtime_ns}\0{seen.st_size}".encode()).hexdigest()[:16]
    listing = os.path.join(tempfile.gettempdir(), f"polydbg-maven-{os.getuid()}-{key}.classpath")
    failed = f"{listing}.failed"
    if not os.path.isfile(listing) and not os.path.isfile(failed):
        code, _ = await run([mvn, "-o", "-q", "-B", "dependency:build-classpath", f"-Dmdep.outputFile={listing}",
                             "-Dmdep.includeScope=test"], cwd, MAVEN_S)
        if code != 0 or not os.path.isfile(listing):
            with open(failed, "w", encoding="utf-8"):
                pass
    try:
        with open(listing, encoding="utf-8") as handle:
            return [entry for entry in handle.read().strip().split(os.pathsep) if os.path.exists(entry)]
    except OSError:
        return []


def _surefire_classpath(cwd: str) -> list[str]:
    """The jars of the test classpath in the newest Surefire report, those still there."""
    reports = sorted(glob.glob(os.path.join(cwd, "target", "surefire-reports", "TEST-*.xml")), key=os.path.getmtime)
    for report in reversed(reports[-3:]):
        try:
            with open(report, encoding="utf-8", errors="replace") as handle:
                found = _SUREFIRE_CLASSPATH.search(handle.read(1 << 20))
        except OSError:
            continue
        if found:
            entries = html.unescape(found.group(1)).split(os.pathsep)
            return [entry for entry in entries if entry.endswith(".jar") and os.path.isfile(entry)]
    return []

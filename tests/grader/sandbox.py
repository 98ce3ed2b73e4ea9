"""The sandbox a submission's programs run in: bubblewrap (bwrap, Debian's and Ubuntu's
`bubblewrap`), which Ubuntu 24.04's AppArmor lets make user namespaces where a plain unshare(1)
is refused (GitHub's runners)."""
import os
import shutil
import subprocess
import tempfile

from grader.common import ROOT


class Sandbox:
    """Each program of a check sees the machine read-only but for one writable folder (its
    submission's), with a /tmp and a /dev/shm of its own (Criterion's runner binds
    /tmp/criterion_PID.sock and maps /dev/shm/bxf_arena_PID, and in a PID namespace every runner
    has the same PID: two graders, or a submission in /tmp, must not meet there), a PID namespace
    whose processes all die with it, and a network namespace with a loopback of its own (Nsight
    Compute finds the program it launched by its PID among the loopback's listeners).
    `visible`: the folders the programs read (the repository, the builds); those in /tmp are
    bound again over the private /tmp. Without bwrap, or where it cannot make namespaces (a
    container without the privilege), the programs run unsandboxed and `words` says so."""

    def __init__(self, visible):
        self.visible = sorted({os.path.realpath(d) for d in visible if d and os.path.isdir(d)})
        self.net = True
        vendored = os.path.join(ROOT, "third_party", "bwrap", "bwrap")  # make deps VENDOR=1
        self.bwrap = shutil.which("bwrap") or (vendored if os.access(vendored, os.X_OK) else None)
        self.why = ("GRADE_SANDBOX=0" if os.environ.get("GRADE_SANDBOX") == "0" else None
                    if self.bwrap else "bubblewrap (bwrap) was not found: apt install "
                    "bubblewrap, or make deps")
        if not self.why:
            self.why = self.probe()
        self.words = ("each check ran in a sandbox (bubblewrap: the machine read-only but for the "
                      "submission's folder, a /tmp and /dev/shm of its own, %s, its processes "
                      "ended with each check)" % ("no network" if self.net else
                                                  "the host's network")
                      if not self.why else
                      "the submissions ran WITHOUT a sandbox (%s): a program could write files "
                      "this user can write" % self.why)

    def probe(self):
        """None where the sandbox works: inside, the repository refuses a file, the writable
        folder takes one, and the host's /tmp is not seen; else why not. Tries without a network
        namespace of its own where one cannot be made."""
        marker = tempfile.NamedTemporaryFile(prefix="grade-probe-", dir="/tmp")
        probe = os.path.join(ROOT, ".grade-sandbox-probe")
        test = ["sh", "-c", '! touch "$0" 2>/dev/null && touch "$1/ok" && ! test -e "$2"',
                probe, None, marker.name]
        said = ""
        try:
            with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "build")
                                             if os.path.isdir(os.path.join(ROOT, "build"))
                                             else None) as d:
                test[4] = d
                for net in (True, False):
                    self.net = net
                    p = subprocess.run(self.wrap(test, d), capture_output=True, text=True,
                                       cwd=ROOT)
                    if p.returncode == 0 and os.path.exists(os.path.join(d, "ok")):
                        return None
                    said = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[0]
        finally:
            marker.close()
            if os.path.exists(probe):
                os.remove(probe)
        return "bwrap did not make the sandbox (%s)" % said

    def shared_ports(self):
        """Whether sandboxes share the host's loopback while their PIDs repeat: then one Nsight
        Compute at a time, since it finds its program by PID, and one compute-sanitizer."""
        return not self.why and not self.net

    def wrap(self, cmd, writable):
        """cmd as run in the sandbox, `writable` the one folder it may write; cmd itself where
        there is no sandbox."""
        if self.why:
            return list(cmd)
        writable = os.path.realpath(writable)
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev",
                "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
        for d in self.visible:
            if d == "/tmp" or d.startswith("/tmp/"):
                args += ["--ro-bind", d, d]
        args += ["--bind", writable, writable, "--setenv", "TMPDIR", "/tmp", "--chdir", ROOT,
                 "--unshare-pid", "--die-with-parent", "--new-session"]
        args += ["--unshare-net"] * self.net
        return args + ["--"] + list(cmd)

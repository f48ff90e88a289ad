// The judge's counter in the candidate's process (sandbox/rules/opcount.py): a small trusted library
// with a C interface, built by the parent, loaded with ctypes before the candidate is imported.
//
// 1. Op counter: a global RecordFunction callback (FUNCTION scope) counting every op that runs
//    while armed (the worker arms it around forward), as totals and, per call, as trees: the
//    outermost op with the set of ops nested under it (sandbox/rules/partial.py compares them).
// 2. Witnesses that the counting machinery works (custom_code.counter_disabled): a probe
//    RecordFunction the callback must see, RecordFunction enabled on this thread, no foreign
//    callback beside ours.
// 3. With KH_PY (Python.h found at build time): calls into the candidate's own extension
//    functions counted and timed while armed (the function objects keep their identity: their
//    PyMethodDef is swapped for one whose entry point counts, then calls the original), the
//    tensor <-> numpy bridges counted while armed, and numpy's ufuncs and array functions
//    called on arrays counted while armed (their vectorcall entry swapped the same way).

#include <ATen/record_function.h>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace {
std::atomic<bool> g_armed{false};
std::mutex g_mu;
std::map<std::string, int64_t> g_counts;  // every op while armed, nested ones too
std::map<std::string, int64_t> g_trees;   // this call's trees: "outer>nested,nested" -> n
std::atomic<int64_t> g_probe_seen{0};
std::atomic<int64_t> g_flags{0};  // tripwires that fired (sandbox/rules/tripwires.py), never cleared
at::CallbackHandle g_handle = 0;
const char* const kProbe = "kh::probe";

struct Tree {
  std::string outer;
  std::set<std::string> nested;
};
thread_local int t_depth = 0;
thread_local Tree t_tree;

struct Ctx : at::ObserverContext {};

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (std::strcmp(name, kProbe) == 0) {
    g_probe_seen.fetch_add(1);
    return nullptr;
  }
  if (!g_armed.load(std::memory_order_relaxed)) return nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_counts[name] += 1;
  }
  if (t_depth == 0) {
    t_tree.outer = name;
    t_tree.nested.clear();
  } else {
    t_tree.nested.insert(name);
  }
  ++t_depth;
  return std::make_unique<Ctx>();
}

void on_exit(const at::RecordFunction&, at::ObserverContext* ctx) {
  if (ctx == nullptr || t_depth <= 0) return;
  if (--t_depth == 0) {
    std::string key = t_tree.outer;
    key += '>';
    bool first = true;
    for (const auto& n : t_tree.nested) {
      if (!first) key += ',';
      key += n;
      first = false;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    g_trees[key] += 1;
  }
}

void add_ours() {
  g_handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_enter, on_exit).scopes({at::RecordScope::FUNCTION}));
}

int64_t dump(std::map<std::string, int64_t>& m, char* buf, int64_t cap) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string out;
  for (const auto& kv : m) {
    out += kv.first;
    out += '\t';
    out += std::to_string(kv.second);
    out += '\n';
  }
  const int64_t n = static_cast<int64_t>(out.size());
  if (n > cap) return n;
  std::memcpy(buf, out.data(), out.size());
  m.clear();
  return n;
}
}  // namespace

extern "C" {
int kh_install() {
  if (g_handle == 0) add_ours();
  return g_handle != 0;
}

void kh_arm(int on) {
  if (on) t_depth = 0;
  g_armed.store(on != 0, std::memory_order_relaxed);
}

// Any RecordFunction callback besides ours (sandbox/rules/hooks.py): set ours aside, ask, put it back.
int kh_foreign() {
  if (g_handle == 0) return at::hasCallbacks();
  at::removeCallback(g_handle);
  bool foreign = at::hasCallbacks();
  add_ours();
  return foreign;
}

// The counting machinery end to end: a RecordFunction fired here must reach our callback (it
// does not when RecordFunction is disabled on this thread, our callback was removed or
// disabled, or the callbacks were cleared).
int kh_probe() {
  const int64_t before = g_probe_seen.load();
  {
    at::RecordFunction guard(at::RecordScope::FUNCTION);
    if (guard.isActive()) guard.before(std::string_view(kProbe), c10::ArrayRef<const c10::IValue>{}, -1);
  }
  return g_probe_seen.load() > before;
}

int kh_rf_enabled() { return at::isRecordFunctionEnabled(); }

int kh_armed() { return g_armed.load(std::memory_order_relaxed); }

// Tripwires record here (bits, sandbox/rules/tripwires.py): out of reach of Python-level tampering.
void kh_flag(int64_t bits) { g_flags.fetch_or(bits); }
int64_t kh_flags() { return g_flags.load(); }

// Totals (every op counted since the last take) and this call's trees, as "name\tcount\n"
// lines into buf, then cleared. Returns the text's length; when it does not fit in cap bytes
// nothing is written or cleared (the caller asks again, larger).
int64_t kh_take(char* buf, int64_t cap) { return dump(g_counts, buf, cap); }
int64_t kh_take_trees(char* buf, int64_t cap) { return dump(g_trees, buf, cap); }
}

#ifdef KH_PY
#include <Python.h>

namespace {
constexpr int kSlots = 256;
enum Kind { OWN = 0, BRIDGE = 1, BRIDGE_ARRAYS = 2, NUMPY = 3 };
struct Slot {
  PyCFunction orig = nullptr;
  int kind = OWN;
};
Slot g_slot[kSlots];
int g_nslot = 0;
std::set<PyMethodDef*> g_ours;
std::atomic<int64_t> g_own_calls{0}, g_own_ns{0}, g_bridge{0}, g_numpy{0};
thread_local int t_own_depth = 0;
PyTypeObject* g_ndarray = nullptr;

int64_t mono_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool is_array(PyObject* o) {
  if (o == nullptr) return false;
  if (g_ndarray != nullptr && PyObject_TypeCheck(o, g_ndarray)) return true;
  return PyObject_CheckBuffer(o);
}

bool any_array(PyObject* const* a, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i)
    if (is_array(a[i])) return true;
  return false;
}

bool any_array_tuple(PyObject* t) {
  if (t == nullptr || !PyTuple_Check(t)) return is_array(t);
  return any_array(&PyTuple_GET_ITEM(t, 0), PyTuple_GET_SIZE(t));
}

// Counts one call through slot I; returns true when the call is the outermost own call (timed).
template <int I>
bool enter(bool arrays) {
  if (!g_armed.load(std::memory_order_relaxed)) return false;
  const int kind = g_slot[I].kind;
  if (kind == OWN) {
    g_own_calls.fetch_add(1);
    return t_own_depth++ == 0;
  }
  if (kind == NUMPY) {
    g_numpy.fetch_add(1);
  } else if (kind == BRIDGE || arrays) {
    g_bridge.fetch_add(1);
  }
  return false;
}

template <int I>
PyObject* leave(PyObject* r, bool timed, int64_t t0) {
  if (g_slot[I].kind == OWN && t_own_depth > 0) {
    --t_own_depth;
    if (timed) g_own_ns.fetch_add(mono_ns() - t0);
  }
  return r;
}

template <int I>
PyObject* t_vk(PyObject* self, PyObject* args, PyObject* kw) {
  const bool armed = g_armed.load(std::memory_order_relaxed);
  const bool timed = enter<I>(armed && g_slot[I].kind == BRIDGE_ARRAYS && any_array_tuple(args));
  const int64_t t0 = timed ? mono_ns() : 0;
  auto f = reinterpret_cast<PyCFunctionWithKeywords>(reinterpret_cast<void (*)(void)>(g_slot[I].orig));
  return leave<I>(f(self, args, kw), timed, t0);
}

template <int I>
PyObject* t_fk(PyObject* self, PyObject* const* a, Py_ssize_t n, PyObject* kwn) {
  const bool armed = g_armed.load(std::memory_order_relaxed);
  const Py_ssize_t all = n + (kwn ? PyTuple_GET_SIZE(kwn) : 0);
  const bool timed = enter<I>(armed && g_slot[I].kind == BRIDGE_ARRAYS && any_array(a, all));
  const int64_t t0 = timed ? mono_ns() : 0;
  auto f = reinterpret_cast<_PyCFunctionFastWithKeywords>(reinterpret_cast<void (*)(void)>(g_slot[I].orig));
  return leave<I>(f(self, a, n, kwn), timed, t0);
}

template <int I>
PyObject* t_f(PyObject* self, PyObject* const* a, Py_ssize_t n) {
  const bool armed = g_armed.load(std::memory_order_relaxed);
  const bool timed = enter<I>(armed && g_slot[I].kind == BRIDGE_ARRAYS && any_array(a, n));
  const int64_t t0 = timed ? mono_ns() : 0;
  auto f = reinterpret_cast<_PyCFunctionFast>(reinterpret_cast<void (*)(void)>(g_slot[I].orig));
  return leave<I>(f(self, a, n), timed, t0);
}

template <int I>
PyObject* t_o(PyObject* self, PyObject* arg) {  // METH_O, METH_NOARGS, METH_VARARGS
  const bool armed = g_armed.load(std::memory_order_relaxed);
  const bool timed = enter<I>(armed && g_slot[I].kind == BRIDGE_ARRAYS && any_array_tuple(arg));
  const int64_t t0 = timed ? mono_ns() : 0;
  return leave<I>(g_slot[I].orig(self, arg), timed, t0);
}

template <size_t... Is>
std::array<PyCFunction, kSlots> table_vk(std::index_sequence<Is...>) {
  return {{reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&t_vk<Is>))...}};
}
template <size_t... Is>
std::array<PyCFunction, kSlots> table_fk(std::index_sequence<Is...>) {
  return {{reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&t_fk<Is>))...}};
}
template <size_t... Is>
std::array<PyCFunction, kSlots> table_f(std::index_sequence<Is...>) {
  return {{reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&t_f<Is>))...}};
}
template <size_t... Is>
std::array<PyCFunction, kSlots> table_o(std::index_sequence<Is...>) {
  return {{&t_o<Is>...}};
}

// numpy: ufuncs and array functions share a few vectorcall entry points; each distinct one
// gets a counting trampoline.
constexpr int kVc = 8;
vectorcallfunc g_vc_orig[kVc] = {};
int g_nvc = 0;

template <int J>
PyObject* t_vc(PyObject* callable, PyObject* const* a, size_t nargsf, PyObject* kwn) {
  if (g_armed.load(std::memory_order_relaxed)) {
    const Py_ssize_t all = PyVectorcall_NARGS(nargsf) + (kwn ? PyTuple_GET_SIZE(kwn) : 0);
    for (Py_ssize_t i = 0; i < all; ++i) {
      if (g_ndarray != nullptr && a[i] != nullptr && PyObject_TypeCheck(a[i], g_ndarray)) {
        g_numpy.fetch_add(1);
        break;
      }
    }
  }
  return g_vc_orig[J](callable, a, nargsf, kwn);
}
vectorcallfunc g_vc_tramp[kVc] = {&t_vc<0>, &t_vc<1>, &t_vc<2>, &t_vc<3>,
                                  &t_vc<4>, &t_vc<5>, &t_vc<6>, &t_vc<7>};
}  // namespace

extern "C" {
int kh_has_py() { return 1; }

void kh_set_ndarray(PyObject* type) {
  if (type != nullptr && PyType_Check(type)) g_ndarray = reinterpret_cast<PyTypeObject*>(type);
}

// Swap the PyMethodDef of a builtin function or method descriptor for one whose entry point
// counts (kind: 0 the candidate's own function, 1 a bridge counted on every call, 2 a bridge
// counted when an argument is an array or a buffer, 3 a numpy method). 1: wrapped (now or before), 0: not a
// plain C function, -1: no slot left.
int kh_wrap(PyObject* f, int kind) {
  PyMethodDef** where = nullptr;
  if (PyCFunction_Check(f)) {
    where = &reinterpret_cast<PyCFunctionObject*>(f)->m_ml;
  } else if (Py_IS_TYPE(f, &PyMethodDescr_Type)) {
    where = &reinterpret_cast<PyMethodDescrObject*>(f)->d_method;
  } else {
    return 0;
  }
  PyMethodDef* d = *where;
  if (d == nullptr || d->ml_meth == nullptr) return 0;
  if (g_ours.count(d)) return 1;
  const int flags = d->ml_flags & ~(METH_CLASS | METH_STATIC | METH_COEXIST);
  if (flags & METH_METHOD) return 0;
  if (g_nslot >= kSlots) return -1;
  static const auto vk = table_vk(std::make_index_sequence<kSlots>{});
  static const auto fk = table_fk(std::make_index_sequence<kSlots>{});
  static const auto fa = table_f(std::make_index_sequence<kSlots>{});
  static const auto oo = table_o(std::make_index_sequence<kSlots>{});
  PyCFunction tramp = nullptr;
  if (flags == (METH_VARARGS | METH_KEYWORDS)) {
    tramp = vk[g_nslot];
  } else if (flags == (METH_FASTCALL | METH_KEYWORDS)) {
    tramp = fk[g_nslot];
  } else if (flags == METH_FASTCALL) {
    tramp = fa[g_nslot];
  } else if (flags == METH_O || flags == METH_NOARGS || flags == METH_VARARGS) {
    tramp = oo[g_nslot];
  } else {
    return 0;
  }
  g_slot[g_nslot].orig = d->ml_meth;
  g_slot[g_nslot].kind = kind;
  ++g_nslot;
  auto* nd = new PyMethodDef{d->ml_name, tramp, d->ml_flags, d->ml_doc};
  g_ours.insert(nd);
  *where = nd;
  return 1;
}

// numpy's ufuncs and array functions: swap the object's vectorcall entry for a counting one.
int kh_wrap_vectorcall(PyObject* obj) {
  PyTypeObject* tp = Py_TYPE(obj);
  if (!PyType_HasFeature(tp, Py_TPFLAGS_HAVE_VECTORCALL) || tp->tp_vectorcall_offset <= 0) return 0;
  auto* slot = reinterpret_cast<vectorcallfunc*>(reinterpret_cast<char*>(obj) + tp->tp_vectorcall_offset);
  vectorcallfunc cur = *slot;
  if (cur == nullptr) return 0;
  for (int j = 0; j < g_nvc; ++j) {
    if (cur == g_vc_tramp[j]) return 1;
    if (cur == g_vc_orig[j]) {
      *slot = g_vc_tramp[j];
      return 1;
    }
  }
  if (g_nvc >= kVc) return -1;
  g_vc_orig[g_nvc] = cur;
  *slot = g_vc_tramp[g_nvc];
  ++g_nvc;
  return 1;
}

// [own calls, ns inside own calls (outermost), bridge calls, numpy calls on arrays], then zeroed.
void kh_take_py(int64_t* out) {
  out[0] = g_own_calls.exchange(0);
  out[1] = g_own_ns.exchange(0);
  out[2] = g_bridge.exchange(0);
  out[3] = g_numpy.exchange(0);
}
}
#else
extern "C" {
int kh_has_py() { return 0; }
}
#endif

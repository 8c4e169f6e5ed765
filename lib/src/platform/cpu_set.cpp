// The cgroup file system, read with the standard library (Windows has none: no quota).
#include "cpu_set.hpp"

#include <charconv>
#include <cmath>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dmlbits {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

std::optional<long long> parse_integer(std::string_view s) {
  s = trim(s);
  long long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> ratio(std::optional<long long> quota, std::optional<long long> period) {
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

std::optional<std::string> read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::optional<double> tighter(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// The quota of `dir` and each of its ancestors up to `top`, the tightest; `read(dir)` reads one.
template <class Read>
std::optional<double> walk_up(const std::filesystem::path& top, std::string_view cgroup_path, Read read) {
  std::string rel(trim(cgroup_path));
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  std::optional<double> q;
  std::filesystem::path dir = top / rel;
  // From the group itself up to the mount point; a group the mount does not show (a
  // container's namespace that hides its ancestors) has only the root to read.
  for (;;) {
    q = tighter(q, read(dir));
    if (rel.empty()) break;
    const auto slash = rel.rfind('/');
    rel = slash == std::string::npos ? std::string() : rel.substr(0, slash);
    dir = top / rel;
  }
  return q;
}

}  // namespace

std::optional<double> parse_cgroup2_cpu_max(std::string_view text) {
  text = trim(text);
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  if (text.substr(0, space) == "max") return std::nullopt;
  return ratio(parse_integer(text.substr(0, space)), parse_integer(text.substr(space + 1)));
}

std::optional<double> parse_cgroup1_cfs(std::string_view quota_us, std::string_view period_us) {
  return ratio(parse_integer(quota_us), parse_integer(period_us));
}

std::optional<double> cgroup_cpu_quota(std::string_view proc_self_cgroup, const std::filesystem::path& root) {
  std::optional<double> q;
  std::size_t start = 0;
  while (start < proc_self_cgroup.size()) {
    std::size_t end = proc_self_cgroup.find('\n', start);
    if (end == std::string_view::npos) end = proc_self_cgroup.size();
    const std::string_view line = proc_self_cgroup.substr(start, end - start);
    start = end + 1;
    // "<id>:<controllers>:<path>"
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string_view path = line.substr(c2 + 1);
    if (line.substr(0, c1) == "0" && controllers.empty()) {  // v2: the unified hierarchy
      // Mounted at the root, or beside v1's controllers at unified/ (systemd's hybrid layout).
      std::error_code ec;
      const bool hybrid = !std::filesystem::exists(root / "cgroup.controllers", ec) &&
                          std::filesystem::is_directory(root / "unified", ec);
      q = tighter(q, walk_up(hybrid ? root / "unified" : root, path,
                             [](const std::filesystem::path& dir) -> std::optional<double> {
                               const auto t = read_text(dir / "cpu.max");
                               return t ? parse_cgroup2_cpu_max(*t) : std::nullopt;
                             }));
      continue;
    }
    // v1: the line whose controllers include "cpu" ("cpu,cpuacct", "cpu").
    bool cpu = false;
    for (std::size_t s = 0; s <= controllers.size();) {
      std::size_t e = controllers.find(',', s);
      if (e == std::string_view::npos) e = controllers.size();
      cpu = cpu || controllers.substr(s, e - s) == "cpu";
      s = e + 1;
    }
    if (!cpu) continue;
    for (const char* mount : {"cpu,cpuacct", "cpu", "cpuacct,cpu"}) {
      const std::filesystem::path top = root / mount;
      std::error_code ec;
      if (!std::filesystem::is_directory(top, ec)) continue;
      q = tighter(q, walk_up(top, path, [](const std::filesystem::path& dir) -> std::optional<double> {
                    const auto quota = read_text(dir / "cpu.cfs_quota_us");
                    const auto period = read_text(dir / "cpu.cfs_period_us");
                    return quota && period ? parse_cgroup1_cfs(*quota, *period) : std::nullopt;
                  }));
      break;
    }
  }
  return q;
}

std::optional<double> cgroup_cpu_quota() {
  const auto text = read_text("/proc/self/cgroup");
  if (!text) return std::nullopt;
  return cgroup_cpu_quota(*text, "/sys/fs/cgroup");
}

}  // namespace dmlbits

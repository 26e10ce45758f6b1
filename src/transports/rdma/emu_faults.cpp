#include "transports/rdma/emu_faults.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"

namespace mcl::transport::rdma {

namespace {

using Devices = std::vector<std::vector<std::string>>;

std::vector<std::string> splitFields(const std::string& item) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    size_t colon = item.find(':', start);
    fields.push_back(item.substr(start, colon - start));
    if (colon == std::string::npos) return fields;
    start = colon + 1;
  }
}

[[noreturn]] void defect(const std::string& item, const std::string& what) {
  throw error(mclInvalidArgument, "MCL_EMU_FAULTS: \"%s\": %s", item.c_str(),
              what.c_str());
}

// A whole decimal number in [low, high], or the item's defect.
int64_t wholeNumber(const std::string& item, const std::string& text,
                    const char* what, int64_t low, int64_t high) {
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < low || v > high)
    defect(item, std::string(what) + " must be a whole number from " +
                     std::to_string(low) + " to " + std::to_string(high) +
                     ", not \"" + text + "\"");
  return v;
}

double rateOf(const std::string& item, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0 && v <= 1))
    defect(item,
           "RATE must be a number above 0 and at most 1 (0.0001: one "
           "frame in 10,000), not \"" +
               text + "\"");
  return v;
}

// MAC:DEVICE, a cabled device of a Mac of the fabric.
void endOf(const std::string& item, const std::string& macText,
           const std::string& device, const Devices& devices, int* mac,
           std::string* name) {
  *mac = static_cast<int>(wholeNumber(item, macText, "MAC", 0, INT32_MAX));
  if (size_t(*mac) >= devices.size())
    defect(item, "Mac " + macText + " is not in the fabric (0.." +
                     std::to_string(devices.size()) + " - 1)");
  const auto& names = devices[size_t(*mac)];
  if (std::find(names.begin(), names.end(), device) == names.end())
    defect(item, "Mac " + macText + " has no cabled device " + device);
  *name = device;
}

EmuPortFault portFault(const std::string& item, const Devices& devices) {
  // port_down:MAC:DEVICE@MS or silent:MAC:DEVICE@MS
  std::vector<std::string> f = splitFields(item);
  size_t at = f.size() == 3 ? f[2].rfind('@') : std::string::npos;
  if (at == std::string::npos)
    defect(item, "should read " + f[0] + ":MAC:DEVICE@MS");
  EmuPortFault p;
  p.silent = f[0] == "silent";
  endOf(item, f[1], f[2].substr(0, at), devices, &p.mac, &p.device);
  p.afterMs = wholeNumber(item, f[2].substr(at + 1), "MS", 0, INT64_MAX / 2);
  return p;
}

EmuFrameFault frameFault(const std::string& item, const Devices& devices) {
  std::vector<std::string> f = splitFields(item);
  std::string kind = f[0];
  EmuFrameFault out;
  const size_t at = kind.find('@');
  if (at != std::string::npos) {
    out.nth = static_cast<uint64_t>(
        wholeNumber(item, kind.substr(at + 1), "N", 1, INT64_MAX));
    kind.resize(at);
  }
  if (kind == "drop")
    out.kind = EmuFrameFaultKind::Drop;
  else if (kind == "dup")
    out.kind = EmuFrameFaultKind::Duplicate;
  else if (kind == "delay")
    out.kind = EmuFrameFaultKind::Delay;
  else if (kind == "wc_error" && out.nth > 0)
    out.kind = EmuFrameFaultKind::CompletionError;
  else
    defect(item,
           "unknown fault; use port_down:MAC:DEVICE@MS, silent:MAC:DEVICE@MS, "
           "drop:RATE, dup:RATE, "
           "delay:RATE:US (each optionally :MAC:DEVICE for one cable), "
           "drop@N:MAC:DEVICE, dup@N:MAC:DEVICE or wc_error@N:MAC:DEVICE");
  size_t next = 1;
  if (out.nth == 0) {
    if (f.size() < 2) defect(item, kind + " needs a RATE: " + kind + ":RATE");
    out.rate = rateOf(item, f[next++]);
  }
  if (out.kind == EmuFrameFaultKind::Delay) {
    if (f.size() <= next)
      defect(item, "delay needs the microseconds: delay:RATE:US");
    out.delayUs = wholeNumber(item, f[next++], "US", 1, 10'000'000);
  }
  const size_t left = f.size() - next;
  if (left == 2)
    endOf(item, f[next], f[next + 1], devices, &out.mac, &out.device);
  else if (left != 0 || out.nth > 0)
    defect(item, out.nth > 0 ? "a fault at the Nth frame names the end that "
                               "sends it: " +
                                   kind + "@N:MAC:DEVICE"
                             : "one cable is named as MAC:DEVICE");
  return out;
}

}  // namespace

double EmuFaultDice::uniform() {
  // splitmix64: small, seedable, and good enough to pick frames.
  uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

EmuFrameFate EmuFaultDice::next(int mac, const std::string& device, int peerMac,
                                const std::string& peerDevice) {
  EmuFrameFate fate;
  if (faults_.empty()) return fate;
  auto it = std::find_if(sentByDevice_.begin(), sentByDevice_.end(),
                         [&](const auto& d) { return d.first == device; });
  if (it == sentByDevice_.end())
    it = sentByDevice_.insert(sentByDevice_.end(), {device, 0});
  const uint64_t number = ++it->second;
  for (const EmuFrameFault& f : faults_) {
    bool hit;
    if (f.nth > 0) {
      hit = f.mac == mac && f.device == device && f.nth == number;
    } else {
      const bool onCable = f.mac < 0 || (f.mac == mac && f.device == device) ||
                           (f.mac == peerMac && f.device == peerDevice);
      hit = onCable && uniform() < f.rate;
    }
    if (!hit) continue;
    switch (f.kind) {
      case EmuFrameFaultKind::Drop:
        fate.drop = true;
        break;
      case EmuFrameFaultKind::Duplicate:
        fate.duplicate = true;
        break;
      case EmuFrameFaultKind::Delay:
        fate.delayNs += f.delayUs * 1000;
        break;
      case EmuFrameFaultKind::CompletionError:
        fate.completionError = true;
        break;
    }
  }
  return fate;
}

EmuFaults parseEmuFaults(const std::string& text, const Devices& devices) {
  EmuFaults faults;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find_first_of(",;", start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    if (item.rfind("port_down:", 0) == 0 || item.rfind("silent:", 0) == 0)
      faults.ports.push_back(portFault(item, devices));
    else
      faults.frames.push_back(frameFault(item, devices));
  }
  return faults;
}

}  // namespace mcl::transport::rdma

// The faults MCL_EMU_FAULTS asks the emulated fabric for: a port that goes
// down at a given time, and frames dropped, duplicated or delayed at a
// given rate or at a given frame number, on every cable or on one. Pure
// data and its parser; the provider (emu_provider.cpp) applies them.
//
// The syntax, items separated by ',' (or ';', as port_down always took):
//   port_down:MAC:DEVICE@MS    that cable goes down MS after init
//   silent:MAC:DEVICE@MS       that cable loses every frame from MS after
//                              init on, both ways, its ports staying up
//   drop:RATE[:MAC:DEVICE]     each frame lost with probability RATE
//   dup:RATE[:MAC:DEVICE]      each frame delivered twice
//   delay:RATE:US[:MAC:DEVICE] each frame held back US microseconds more
//   drop@N:MAC:DEVICE          the Nth frame MAC sends out of DEVICE lost
//   dup@N:MAC:DEVICE           ... delivered twice
//   wc_error@N:MAC:DEVICE      ... never sent: its send completes with an
//                              error status, as a provider reports one
// With MAC:DEVICE a rate applies to the frames of that one cable, both
// ways; without, to every cable. A frame is one SEND (a UC message whose
// packet is lost is lost whole: the receiver drops the rest of it).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mcl::transport::rdma {

struct EmuPortFault {
  int mac = -1;
  std::string device;
  int64_t afterMs = 0;  // from the provider's start
  bool silent = false;  // the ports stay up; only the frames are lost
};

enum class EmuFrameFaultKind { Drop, Duplicate, Delay, CompletionError };

struct EmuFrameFault {
  EmuFrameFaultKind kind = EmuFrameFaultKind::Drop;
  double rate = 0;      // per frame, (0, 1]; unused when nth > 0
  uint64_t nth = 0;     // the Nth frame (from 1) sent by mac's device
  int64_t delayUs = 0;  // Delay only
  int mac = -1;         // -1: every cable
  std::string device;
};

struct EmuFaults {
  std::vector<EmuPortFault> ports;
  std::vector<EmuFrameFault> frames;
};

// What happens to one frame as it leaves a port.
struct EmuFrameFate {
  bool drop = false;
  bool duplicate = false;
  int64_t delayNs = 0;
  bool completionError = false;
};

// Rolls the frame faults for each frame a Mac sends: the rates with a
// seeded generator (the same seed, the same frames hit), the Nth-frame
// faults by counting each device's frames.
class EmuFaultDice {
 public:
  EmuFaultDice(std::vector<EmuFrameFault> faults, uint64_t seed)
      : faults_(std::move(faults)), rng_(seed) {}
  bool empty() const { return faults_.empty(); }
  // The next frame Mac `mac` sends out of `device`, to the cable's far end
  // (peerMac, peerDevice).
  EmuFrameFate next(int mac, const std::string& device, int peerMac,
                    const std::string& peerDevice);

 private:
  double uniform();
  std::vector<EmuFrameFault> faults_;
  uint64_t rng_;
  std::vector<std::pair<std::string, uint64_t>> sentByDevice_;
};

// `devices[m]`: Mac m's cabled devices (what a MAC:DEVICE may name).
// Throws mcl::Error(mclInvalidArgument) naming MCL_EMU_FAULTS, the item and
// the defect.
EmuFaults parseEmuFaults(const std::string& text,
                         const std::vector<std::vector<std::string>>& devices);

}  // namespace mcl::transport::rdma

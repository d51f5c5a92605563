// This host's IPv4 interfaces, and the choice of the address one host should give others to reach
// it: the one on a subnet they share (clusters, containers and the test bed's namespaces often
// know each other by address only, and a host's own name may resolve to 127.0.1.1). No MPI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hpo {

// One IPv4 address of an interface; address and netmask in host byte order. A plain value.
struct InterfaceAddress {
  std::string interface;
  uint32_t address = 0;
  uint32_t netmask = 0;
};

// The IPv4 addresses of this host's interfaces that are up, loopback excluded, in the order
// getifaddrs lists them. Empty when there is none (or getifaddrs fails).
std::vector<InterfaceAddress> LocalIpv4Addresses();

// "10.1.2.3".
std::string FormatIpv4(uint32_t address);

// The index of the first of `remote` on a subnet (the remote address's netmask) that one of
// `local` is on, or -1; `local_interface` (may be null) gets that local address's interface.
int FindSharedSubnet(const std::vector<InterfaceAddress>& remote,
                     const std::vector<InterfaceAddress>& local, std::string* local_interface);

// A list of addresses as one line ("eth0 10.0.0.1 255.255.255.0;...") and back. Decode returns
// false on a malformed text.
std::string EncodeAddresses(const std::vector<InterfaceAddress>& addresses);
bool DecodeAddresses(const std::string& text, std::vector<InterfaceAddress>* addresses);

}  // namespace hpo

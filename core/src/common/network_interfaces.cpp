#include "common/network_interfaces.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <sstream>

namespace hpo {

std::vector<InterfaceAddress> LocalIpv4Addresses() {
  std::vector<InterfaceAddress> addresses;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return addresses;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_netmask == nullptr ||
        entry->ifa_addr->sa_family != AF_INET || (entry->ifa_flags & IFF_UP) == 0 ||
        (entry->ifa_flags & IFF_LOOPBACK) != 0) {
      continue;
    }
    InterfaceAddress address;
    address.interface = entry->ifa_name;
    address.address = ntohl(reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr.s_addr);
    address.netmask =
        ntohl(reinterpret_cast<const sockaddr_in*>(entry->ifa_netmask)->sin_addr.s_addr);
    addresses.push_back(address);
  }
  freeifaddrs(list);
  return addresses;
}

std::string FormatIpv4(uint32_t address) {
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 0xff) + "." +
         std::to_string((address >> 8) & 0xff) + "." + std::to_string(address & 0xff);
}

int FindSharedSubnet(const std::vector<InterfaceAddress>& remote,
                     const std::vector<InterfaceAddress>& local, std::string* local_interface) {
  for (size_t r = 0; r < remote.size(); ++r) {
    const uint32_t mask = remote[r].netmask;
    for (const InterfaceAddress& mine : local) {
      if ((mine.address & mask) == (remote[r].address & mask)) {
        if (local_interface != nullptr) *local_interface = mine.interface;
        return static_cast<int>(r);
      }
    }
  }
  return -1;
}

std::string EncodeAddresses(const std::vector<InterfaceAddress>& addresses) {
  std::string text;
  for (const InterfaceAddress& entry : addresses) {
    if (!text.empty()) text += ';';
    text += entry.interface + ' ' + FormatIpv4(entry.address) + ' ' + FormatIpv4(entry.netmask);
  }
  return text;
}

namespace {

bool ParseIpv4(const std::string& text, uint32_t* address) {
  in_addr parsed;
  if (inet_pton(AF_INET, text.c_str(), &parsed) != 1) return false;
  *address = ntohl(parsed.s_addr);
  return true;
}

}  // namespace

bool DecodeAddresses(const std::string& text, std::vector<InterfaceAddress>* addresses) {
  addresses->clear();
  std::istringstream entries(text);
  for (std::string entry; std::getline(entries, entry, ';');) {
    std::istringstream fields(entry);
    InterfaceAddress address;
    std::string ip, mask, extra;
    if (!(fields >> address.interface >> ip >> mask) || (fields >> extra) ||
        !ParseIpv4(ip, &address.address) || !ParseIpv4(mask, &address.netmask)) {
      return false;
    }
    addresses->push_back(address);
  }
  return true;
}

}  // namespace hpo

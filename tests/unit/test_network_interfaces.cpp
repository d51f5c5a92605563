#include "common/network_interfaces.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hpo {
namespace {

InterfaceAddress Address(const std::string& interface, uint32_t address, uint32_t netmask) {
  InterfaceAddress entry;
  entry.interface = interface;
  entry.address = address;
  entry.netmask = netmask;
  return entry;
}

constexpr uint32_t kSlash24 = 0xffffff00u;
constexpr uint32_t kSlash16 = 0xffff0000u;

TEST(NetworkInterfacesTest, FormatsDottedQuads) {
  EXPECT_EQ(FormatIpv4(0x0a0d8801u), "10.13.136.1");
  EXPECT_EQ(FormatIpv4(0xffffff00u), "255.255.255.0");
}

TEST(NetworkInterfacesTest, PicksTheLeaderAddressOnASubnetThisHostShares) {
  // The leader has a management network first and the cluster network second; this host is only
  // on the cluster network.
  const std::vector<InterfaceAddress> leader = {Address("eth0", 0xc0a80105u, kSlash24),
                                                Address("ib0", 0x0a0d8801u, kSlash24)};
  const std::vector<InterfaceAddress> mine = {Address("ens5", 0x0a0d8807u, kSlash24)};
  std::string interface;
  EXPECT_EQ(FindSharedSubnet(leader, mine, &interface), 1);
  EXPECT_EQ(interface, "ens5");
}

TEST(NetworkInterfacesTest, UsesTheLeadersNetmask) {
  // 10.13.x.x/16 on the leader covers this host's 10.13.200.9/24.
  const std::vector<InterfaceAddress> leader = {Address("eth0", 0x0a0d0001u, kSlash16)};
  const std::vector<InterfaceAddress> mine = {Address("eth1", 0x0a0dc809u, kSlash24)};
  EXPECT_EQ(FindSharedSubnet(leader, mine, nullptr), 0);
}

TEST(NetworkInterfacesTest, NoSharedSubnetIsMinusOne) {
  const std::vector<InterfaceAddress> leader = {Address("eth0", 0xc0a80105u, kSlash24)};
  const std::vector<InterfaceAddress> mine = {Address("eth0", 0xc0a80205u, kSlash24)};
  std::string interface = "unchanged";
  EXPECT_EQ(FindSharedSubnet(leader, mine, &interface), -1);
  EXPECT_EQ(interface, "unchanged");
  EXPECT_EQ(FindSharedSubnet({}, mine, nullptr), -1);
}

TEST(NetworkInterfacesTest, EncodesAndDecodesAddressLists) {
  const std::vector<InterfaceAddress> addresses = {Address("eth0", 0xc0a80105u, kSlash24),
                                                   Address("ib0", 0x0a0d8801u, kSlash16)};
  const std::string text = EncodeAddresses(addresses);
  EXPECT_EQ(text, "eth0 192.168.1.5 255.255.255.0;ib0 10.13.136.1 255.255.0.0");
  std::vector<InterfaceAddress> decoded;
  ASSERT_TRUE(DecodeAddresses(text, &decoded));
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[1].interface, "ib0");
  EXPECT_EQ(decoded[1].address, 0x0a0d8801u);
  EXPECT_EQ(decoded[1].netmask, kSlash16);
  EXPECT_TRUE(DecodeAddresses("", &decoded));
  EXPECT_TRUE(decoded.empty());
  EXPECT_FALSE(DecodeAddresses("eth0 300.1.1.1 255.0.0.0", &decoded));
  EXPECT_FALSE(DecodeAddresses("eth0 10.0.0.1", &decoded));
}

TEST(NetworkInterfacesTest, LocalAddressesLeaveOutLoopback) {
  for (const InterfaceAddress& entry : LocalIpv4Addresses()) {
    EXPECT_NE(entry.address >> 24, 127u) << entry.interface;
  }
}

}  // namespace
}  // namespace hpo

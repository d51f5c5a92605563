#!/usr/bin/env bash
# Downloads, here, the Debian 12 packages that bench/gpu/run.sh needs on a GPU machine which has
# CUDA PyTorch 2.x, nvcc and NCCL but none of Debian's packages: Open MPI, HDF5, yaml-cpp,
# Boost.ProgramOptions, Eigen, LBFGSpp, FP16, GoogleTest, zlib headers, and the shared libraries
# they load that a bare image may lack. The .deb files go to DIR/debs (default .gpu-deps, which
# git ignores; about 32 MB), to be carried beside the tree; run.sh unpacks them there.
#   bench/gpu/pack-deps.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-.gpu-deps}
packages=(
  # Open MPI 4.1 and what its libraries load
  libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common libpmix2 libhwloc15 libevent-core-2.1-7
  libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200
  libnuma1 libpsm2-2 libpsm-infinipath1 libmunge2 libltdl7 libxnvctrl0 libpciaccess0 libxext6
  libx11-6 libx11-data libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 ocl-icd-libopencl1
  # HDF5 (serial) and what it loads
  libhdf5-dev libhdf5-103-1 libsz2 libaec0 libcurl3-gnutls libnghttp2-14 librtmp1 libssh2-1
  libpsl5 libidn2-0 libldap-2.5-0 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0
  libkeyutils1 libcom-err2 libgnutls30 libnettle8 libhogweed6 libtasn1-6 libp11-kit0
  libunistring2 libbrotli1 libsasl2-2 libsasl2-modules-db libdb5.3 libffi8 libgmp10
  # the rest of the build
  libyaml-cpp-dev libyaml-cpp0.7 libboost-program-options-dev libboost-program-options1.74-dev
  libboost-program-options1.74.0 libboost1.74-dev libeigen3-dev liblbfgspp-dev libfp16-dev
  libgtest-dev libgmock-dev zlib1g-dev
)
mkdir -p "$dir/debs"
cd "$dir/debs"
rm -f ./*.deb
apt-get download -q "${packages[@]}"
echo "pack-deps.sh: $(ls ./*.deb | wc -l) packages, $(du -sh . | cut -f1) in $dir/debs"

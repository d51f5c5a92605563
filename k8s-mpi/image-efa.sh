#!/bin/sh
# image-efa.sh EFA VERSION: run by k8s-mpi/Dockerfile's CUDA stages. With EFA=1, installs AWS's EFA
# software from the EFA installer VERSION (libfabric with the EFA provider, rdma-core, AWS's Open
# MPI in /opt/amazon/openmpi, the NCCL plugin in /opt/amazon/ofi-nccl) and makes it the one that
# processes started by sshd find: they get neither the image's ENV nor the pod's env, so the loader
# cache and /usr/local/bin (on sshd's default PATH) point at it, and pam_env hands them the EFA
# settings from /etc/environment. With EFA=0, does nothing.
#
# In a container: no kernel module (the node's AMI has it), no ulimit files (the pod's limits
# apply), no check of a device that the build machine does not have. The installer downloads from
# AWS; it cannot be fetched where only Debian's archive and PyPI can be reached.
set -eu
[ "$1" = 1 ] || exit 0
version=$2
apt-get update
apt-get install -y --no-install-recommends ca-certificates curl
curl -fsSL "https://efa-installer.amazonaws.com/aws-efa-installer-${version}.tar.gz" |
  tar -xz -C /tmp
(cd /tmp/aws-efa-installer && ./efa_installer.sh -y --skip-kmod --skip-limit-conf --no-verify)
rm -rf /tmp/aws-efa-installer
printf '%s\n' /opt/amazon/ofi-nccl/lib /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu \
  /opt/amazon/openmpi/lib /opt/amazon/efa/lib > /etc/ld.so.conf.d/hpo-efa.conf
ldconfig
ln -sf /opt/amazon/openmpi/bin/* /usr/local/bin/
printf 'FI_PROVIDER=efa\nRDMAV_FORK_SAFE=1\n' >> /etc/environment

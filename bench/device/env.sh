# Sourced at the start of a device command (bench/device/prep.sh made .gl/): installs the loader
# and the driver's dispatch libraries, unpacks splatc's other libraries into /tmp/splatc-libs
# (SPLATC_LIBS: give it to splatc as LD_LIBRARY_PATH, as bench/device/seeds.sh does). T0 is the
# command's start (seconds), for seeds.sh's deadline.
T0=${T0:-$(date +%s)}
export T0
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
for f in .gl/extra/*.deb; do dpkg -x "$f" /tmp/splatc-libs; done
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export CUDA_DEVICE_ORDER=PCI_BUS_ID  # torch's GPU numbers are then Vulkan's (splatc info)
SPLATC_LIBS=/tmp/splatc-libs/usr/lib/x86_64-linux-gnu:/tmp/splatc-libs/lib/x86_64-linux-gnu
export SPLATC_LIBS

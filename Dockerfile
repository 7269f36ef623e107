# wavejit on Debian 12 with Debian's ROCm 5.2 user space: HIP programs build with hipcc and run on emulated AMD
# GPUs under `wavejit exec`. Build the release tarball first, then the image:
#   bash scripts/package.sh && docker build -t wavejit .
# scripts/image.sh makes the same root filesystem without a registry or a daemon (mmdebstrap).
FROM debian:12
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates hipcc libamdhip64-dev libhsa-runtime-dev rocm-device-libs rocminfo \
 && rm -rf /var/lib/apt/lists/*
# ADD unpacks a local tarball
ADD dist/wavejit-*-x86_64-linux-gnu.tar.gz /opt/
RUN ln -s /opt/wavejit-*-x86_64-linux-gnu/bin/wavejit /usr/local/bin/wavejit && wavejit --version
CMD ["/bin/bash"]

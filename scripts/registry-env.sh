# Sourced by the scripts: where corepack and yarn download from. The registry comes from
# npm's own configuration; no host is written into any file.
registry="$(npm config get registry)"
export COREPACK_NPM_REGISTRY="${registry%/}"
export YARN_NPM_REGISTRY_SERVER="${registry%/}"
export COREPACK_ENABLE_DOWNLOAD_PROMPT=0

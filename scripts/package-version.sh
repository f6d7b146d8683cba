# package-version.sh, sourced: sets PACKAGE_VERSION, the release's version
# as the package registries want it (semver, no leading v). A tagged
# release v1.2.3 gives 1.2.3; an untagged build a prerelease of 0.0.0 that
# names the commit, so npm and the MCP Registry still accept it.
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
PACKAGE_VERSION=${VERSION#v}
if ! [[ $PACKAGE_VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  PACKAGE_VERSION="0.0.0-dev.${PACKAGE_VERSION//[^0-9A-Za-z-]/-}"
fi

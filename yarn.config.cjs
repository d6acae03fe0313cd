// Workspace rules checked by `yarn constraints` in CI.

// Cordis 4 is pinned (see README, Versions).
const CORDIS = '4.0.0-beta.5'
// Koishi 4 runs on cordis 3. A plugin that loads on both hosts (external/*, @dogu/http)
// names both cordis lines as its peer, so a Koishi app (cordis 3) can install it; its dev
// dependency stays the pinned cordis 4 its tests run on.
const CORDIS_BOTH_HOSTS = `^3.18.1 || ${CORDIS}`
// The Koishi host, the one workspace in cordis 3's world.
const KOISHI_HOST = 'koishi-plugin-dogu'
const isKoishiSide = (ident) => ident === 'koishi' || ident.startsWith('@koishijs/')
// The exceptions to one version everywhere: the Koishi host's console page is built by
// `koishi-console build` (@koishijs/client 5.30) with the vite 5, Vue plugin, element-plus
// and vue-i18n @koishijs/client brings, not the vite 8 line of @dogu/webui's own page. The
// root `resolutions` pins vite 8.3.8 for vitest only (`vitest/vite`), so it does not reach them.
// The Koishi host's ChatLuna bridge also tests against the @langchain/core 0.3 line ChatLuna
// peers on, while @dogu/frameworks is tested with LangChain 1 (the Koishi host's dependencies
// stay in its own node_modules: `hoistingLimits: workspaces`).
const KOISHI_OWN_VERSIONS = new Set(['vite', '@vitejs/plugin-vue', 'element-plus', 'vue-i18n', '@langchain/core'])

/** @type {import('@yarnpkg/types')} */
module.exports = {
  async constraints({ Yarn }) {
    const workspaces = Yarn.workspaces()
    const internal = new Set(workspaces.map((workspace) => workspace.ident))

    for (const workspace of workspaces) {
      // Every workspace is an ES module package for Node 20 and later.
      workspace.set('type', 'module')
      // Node 20 or later; a workspace may ask for a later 20.x minor (html-to-text needs 20.19).
      if (!/^>=20(\.\d+){0,2}$/.test(workspace.manifest.engines?.node ?? '')) workspace.set('engines.node', '>=20')
    }

    for (const dependency of Yarn.dependencies()) {
      // Internal packages always point at the workspace itself.
      if (internal.has(dependency.ident)) {
        dependency.update('workspace:^')
        continue
      }
      // cordis is provided by the host app: a peer (pinned exactly) plus a dev dependency.
      if (dependency.ident === 'cordis' && dependency.type === 'dependencies') {
        dependency.error('cordis must be a peer + dev dependency, never a regular dependency')
      }
      // Koishi's packages bring cordis 3 along: they stay inside the Koishi host.
      if (isKoishiSide(dependency.ident) && dependency.workspace.ident !== KOISHI_HOST) {
        dependency.error(`${dependency.ident} belongs to the Koishi host (${KOISHI_HOST}) alone: it brings cordis 3 into this workspace`)
      }
      // One version of each external dependency across all workspaces.
      if (dependency.type === 'peerDependencies') continue
      const koishiOwn = (candidate) => KOISHI_OWN_VERSIONS.has(candidate.ident) && candidate.workspace.ident === KOISHI_HOST
      if (koishiOwn(dependency)) continue
      for (const other of Yarn.dependencies({ ident: dependency.ident })) {
        if (other.type === 'peerDependencies' || other.range === dependency.range || koishiOwn(other)) continue
        dependency.error(`${dependency.ident} is ${dependency.range} here but ${other.range} in ${other.workspace.ident}: use one version everywhere`)
      }
    }

    for (const workspace of workspaces) {
      const peer = workspace.pkg.peerDependencies.get('cordis')
      const dev = Yarn.dependency({ workspace, ident: 'cordis', type: 'devDependencies' })
      if (peer && !dev) workspace.error('cordis as a peer dependency needs the same pinned version as a dev dependency')
      if (dev && dev.range !== CORDIS) dev.update(CORDIS)
      const peerDep = Yarn.dependency({ workspace, ident: 'cordis', type: 'peerDependencies' })
      if (peerDep && peerDep.range !== CORDIS && peerDep.range !== CORDIS_BOTH_HOSTS) peerDep.update(CORDIS)
    }

    // The exception: the Koishi host. Koishi is its peer (any 4.18) plus the pinned version
    // its tests run on. Its dependencies are not hoisted, or a hoisted minato would resolve
    // the workspace's cordis 4 and fail; require(esm) of the @dogu packages needs Node 20.19.
    const host = Yarn.workspace({ ident: KOISHI_HOST })
    if (host) {
      host.set('installConfig.hoistingLimits', 'workspaces')
      host.set('peerDependencies.koishi', '^4.18.0')
      host.set('devDependencies.koishi', '4.18.11')
      host.set('engines.node', '>=20.19')
    }
  },
}

// Workspace rules checked by `yarn constraints` in CI.
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
      // One version of each external dependency across all workspaces.
      if (dependency.type === 'peerDependencies') continue
      for (const other of Yarn.dependencies({ ident: dependency.ident })) {
        if (other.type === 'peerDependencies' || other.range === dependency.range) continue
        dependency.error(`${dependency.ident} is ${dependency.range} here but ${other.range} in ${other.workspace.ident}: use one version everywhere`)
      }
    }

    for (const workspace of workspaces) {
      const peer = workspace.pkg.peerDependencies.get('cordis')
      const dev = Yarn.dependency({ workspace, ident: 'cordis', type: 'devDependencies' })
      if (peer && !dev) workspace.error('cordis as a peer dependency needs the same pinned version as a dev dependency')
      if (dev && dev.range !== '4.0.0-beta.5') dev.update('4.0.0-beta.5')
      const peerDep = Yarn.dependency({ workspace, ident: 'cordis', type: 'peerDependencies' })
      if (peerDep && peerDep.range !== '4.0.0-beta.5') peerDep.update('4.0.0-beta.5')
    }
  },
}

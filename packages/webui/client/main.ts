import { createApp } from 'vue'
import ConsoleApp from './components/ConsoleApp.vue'
import { installConsole } from './install'
import { httpTransport } from './transport'

// The token comes once in the address (`/dogu/#token=…`) and is kept for the tab only.
const fromHash = new URLSearchParams(location.hash.slice(1)).get('token')
if (fromHash) {
  sessionStorage.setItem('dogu-console-token', fromHash)
  history.replaceState(null, '', location.pathname)
}

// The OAuth callback page (`/dogu/mcp/oauth/callback`) is the console too: its API is at `/dogu/api`.
const base = location.pathname.replace(/\/(index\.html|mcp\/oauth\/callback)?$/, '')
const app = createApp(ConsoleApp)
installConsole(app, httpTransport(base, () => sessionStorage.getItem('dogu-console-token') ?? undefined))
app.mount('#app')

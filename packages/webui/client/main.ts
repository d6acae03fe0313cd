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

const base = location.pathname.replace(/\/(index\.html)?$/, '')
const app = createApp(ConsoleApp)
installConsole(app, httpTransport(base, () => sessionStorage.getItem('dogu-console-token') ?? undefined))
app.mount('#app')

// For `vue-tsc` only: schemastery-vue ships its .vue sources, which do not type-check
// under this project's strict settings. The page uses only its plugin object.
import type { Plugin } from 'vue'

declare const form: Plugin
export default form

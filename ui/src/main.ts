// First: a language tag Intl accepts (see locale.ts), before uPlot loads.
import './lib/locale';
import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';

// Startup is measured in marks (`kip:*`), read by the window and browser
// tests into their metrics files.
performance.mark('kip:script');
const app = mount(App, { target: document.getElementById('app')! });

export default app;

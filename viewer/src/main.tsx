import { render } from 'preact';
import { App } from './components/app.js';
import { applyTheme, storedTheme } from './format.js';
import './styles.css';

applyTheme(storedTheme());
render(<App />, document.getElementById('app')!);

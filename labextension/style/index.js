import './base.css';
import './provenance.css';
